import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/*
 * Where a channel may send: http(s) only; never to a link-local or cloud metadata address (checked
 * when the channel is saved and again at every delivery, as DNS can change); loopback and private
 * ranges allowed unless the organization refuses them (self-hosted receivers are internal).
 */

const FORBIDDEN = new BlockList();
FORBIDDEN.addSubnet('169.254.0.0', 16, 'ipv4');
FORBIDDEN.addSubnet('fe80::', 10, 'ipv6');
FORBIDDEN.addAddress('fd00:ec2::254', 'ipv6');

const PRIVATE = new BlockList();
PRIVATE.addSubnet('127.0.0.0', 8, 'ipv4');
PRIVATE.addSubnet('10.0.0.0', 8, 'ipv4');
PRIVATE.addSubnet('172.16.0.0', 12, 'ipv4');
PRIVATE.addSubnet('192.168.0.0', 16, 'ipv4');
PRIVATE.addSubnet('100.64.0.0', 10, 'ipv4');
PRIVATE.addSubnet('0.0.0.0', 8, 'ipv4');
PRIVATE.addAddress('::1', 'ipv6');
PRIVATE.addAddress('::', 'ipv6');
PRIVATE.addSubnet('fc00::', 7, 'ipv6');

/** An IPv4 address written as IPv6 (::ffff:169.254.169.254) is judged as the IPv4 address it is. */
const unmapped = (address: string) => {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped ? mapped[1]! : address;
};

const family = (address: string) => (isIP(address) === 6 ? 'ipv6' : 'ipv4');

/** Why Bosun may not send to `address` (an IP), or null when it may. */
export function addressRefusal(address: string, refusePrivate: boolean): string | null {
  const ip = unmapped(address);
  if (FORBIDDEN.check(ip, family(ip))) return `${address} is a link-local or cloud metadata address: never a notification target`;
  if (refusePrivate && PRIVATE.check(ip, family(ip))) return `${address} is a loopback or private address, which this organization’s notification settings refuse`;
  return null;
}

export class AddressRefused extends Error {
  override name = 'AddressRefused';
}

/** The URL's scheme, or a refusal: only http and https. */
export function schemeRefusal(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'not a URL';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return `an http or https URL (not ${parsed.protocol.replace(/:$/, '')})`;
  if (parsed.username || parsed.password) return 'a URL without credentials in it';
  return null;
}

/**
 * The addresses `url`'s host resolves to, every one of them allowed; throws AddressRefused naming
 * the first that is not (or a host that does not resolve). A delivery connects to the first.
 */
export async function allowedAddresses(url: string, refusePrivate: boolean): Promise<Array<{ address: string; family: 4 | 6 }>> {
  const host = new URL(url).hostname.replace(/^\[(.*)\]$/, '$1');
  let addresses: Array<{ address: string; family: number }>;
  if (isIP(host)) addresses = [{ address: host, family: isIP(host) }];
  else {
    try {
      addresses = await lookup(host, { all: true, verbatim: true });
    } catch (error) {
      throw new AddressRefused(`${host} does not resolve (${(error as NodeJS.ErrnoException).code ?? 'lookup failed'})`);
    }
  }
  if (!addresses.length) throw new AddressRefused(`${host} does not resolve`);
  for (const { address } of addresses) {
    const refusal = addressRefusal(address, refusePrivate);
    if (refusal) throw new AddressRefused(`${host} resolves to ${refusal}`);
  }
  return addresses.map(({ address, family: f }) => ({ address, family: f === 6 ? 6 : 4 }));
}
