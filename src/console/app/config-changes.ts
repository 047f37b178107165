import { useEffect } from 'preact/hooks';
import { pageSocket } from './live';

/*
 * What a page shows of definitions kept in Git (the Config page, a managed definition's page) is
 * read again when the organization's config changes (the socket's ConfigChanged, which names
 * nothing: docs/events.md) and after a reconnect, as changes may have been missed meanwhile.
 */
export function useConfigChanges(reread: () => unknown): void {
  useEffect(() => {
    const socket = pageSocket();
    const changed = () => void reread();
    socket.on('ConfigChanged', changed);
    socket.io.on('reconnect', changed);
    return () => {
      socket.off('ConfigChanged', changed);
      socket.io.off('reconnect', changed);
    };
  }, [reread]);
}
