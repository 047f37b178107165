import { ScheduleModel, type Schedule } from '../../domain/schedules/model';
import { DeploymentModel, type Deployment } from '../../domain/deployments/model';
import { PipelineModel, type Pipeline } from '../../domain/pipelines/model';
import type { Principal } from '../../domain/tokens/service';
import { readableDeploymentFilter, readablePipelineFilter } from '../access/gate';
import { findPage, type PageQuery } from '../http/pagination';
import type { ScheduleLookup } from './lookup';

/**
 * GET /schedules: every schedule of the deployments and pipelines the caller may read, by name,
 * each naming what it runs (`deployment_name`, or `pipeline_name`).
 */
export const organizationSchedules =
  ({ deployments: ofDeployments, pipelines: ofPipelines }: { deployments: ScheduleLookup; pipelines: ScheduleLookup }) =>
  async (principal: Principal, page: PageQuery) => {
    const [deployments, pipelines] = await Promise.all([
      DeploymentModel.find(await readableDeploymentFilter(principal)).lean<Deployment[]>(),
      PipelineModel.find(await readablePipelineFilter(principal)).lean<Pipeline[]>(),
    ]);
    const deploymentById = new Map(deployments.map((d) => [d._id.toString(), d]));
    const pipelineById = new Map(pipelines.map((p) => [p._id.toString(), p]));
    const filter = { $or: [{ deployment_id: { $in: deployments.map((d) => d._id) } }, { pipeline_id: { $in: pipelines.map((p) => p._id) } }] };
    return findPage(
      ScheduleModel,
      filter,
      page,
      async (schedule: Schedule) => {
        if (schedule.pipeline_id) {
          const pipeline = pipelineById.get(schedule.pipeline_id.toString())!;
          return { ...(await ofPipelines.view(schedule, pipeline)), deployment_name: null, pipeline_name: pipeline.name };
        }
        const deployment = deploymentById.get(schedule.deployment_id!.toString())!;
        return { ...(await ofDeployments.view(schedule, deployment)), deployment_name: deployment.name, pipeline_name: null };
      },
      { name: 1, _id: 1 },
    );
  };
