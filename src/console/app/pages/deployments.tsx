import { get } from '../api';
import type { DeploymentListItem } from '../api-types';
import { ErrorNote, Section, Status, useLoad, When } from '../components/common';

export const targetsText = (d: Pick<DeploymentListItem, 'server_id' | 'targets'>) => {
  if (d.server_id) return 'one server';
  const parts = [];
  if (d.targets?.server_ids.length) parts.push(`${d.targets.server_ids.length} listed server${d.targets.server_ids.length > 1 ? 's' : ''}`);
  if (d.targets?.tags.length) parts.push(`servers tagged ${d.targets.tags.join(' + ')}`);
  return parts.join(' and ') || 'no servers';
};

export function Deployments() {
  const list = useLoad(() => get<DeploymentListItem[]>('/api/v1/deployments?per_page=100'), []);
  return (
    <main id="main">
      <h1>Deployments</h1>
      <ErrorNote error={list.error} />
      <Section title={list.data ? `${list.data.length} deployment${list.data.length === 1 ? '' : 's'}` : 'Deployments'}>
        <table>
          <thead>
            <tr>
              <th>Deployment</th>
              <th>Runs on</th>
              <th>Last run</th>
              <th>When</th>
            </tr>
          </thead>
          <tbody>
            {(list.data ?? []).map((d) => (
              <tr key={d.id}>
                <td>
                  <a href={`/deployments/${d.id}`}>{d.name}</a>
                </td>
                <td>{targetsText(d)}</td>
                <td>
                  <Status value={d.last_run_status ?? 'never run'} />
                </td>
                <td>
                  <When at={d.last_run_at} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {list.data?.length === 0 ? <p class="muted">No deployment yet: define one with POST /api/v1/deployments.</p> : null}
      </Section>
    </main>
  );
}
