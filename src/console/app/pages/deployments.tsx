import { get } from '../api';
import type { DeploymentListItem } from '../api-types';
import { ErrorNote, Section, Status, useLoad, When } from '../components/common';
import { Table } from '../components/table';

export const targetsText = (d: Pick<DeploymentListItem, 'server_id' | 'server_title' | 'targets'>) => {
  if (d.server_id) return d.server_title ?? 'one server (deleted)';
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
        <Table
          rows={list.data}
          rowKey={(d) => d.id}
          empty="No deployment yet: define one with POST /api/v1/deployments."
          columns={[
            { head: 'Deployment', cell: (d) => <a href={`/deployments/${d.id}`}>{d.name}</a> },
            { head: 'Runs on', cell: targetsText },
            { head: 'Last run', cell: (d) => <Status value={d.last_run_status ?? 'never run'} /> },
            { head: 'When', cell: (d) => <When at={d.last_run_at} /> },
          ]}
        />
      </Section>
    </main>
  );
}
