// Server titles by id, for lists that name servers by id.
import { get } from '../api';
import type { ServerListItem } from '../api-types';
import { useLoad } from './common';

/** A server's title from its id (the id's last 8 characters until the servers are read, or if it is gone). */
export function useServerTitles() {
  const servers = useLoad(() => get<ServerListItem[]>('/api/v1/servers?per_page=100'), []);
  return (id: string | null | undefined) => (id ? (servers.data?.find((s) => s.id === id)?.title ?? id.slice(-8)) : '—');
}
