import mongoose from 'mongoose';
import './organizations/model';
import './tokens/model';
import { RETIRED_SERVER_INDEXES, ServerModel } from './servers/model';
import { DeploymentRunModel, RETIRED_RUN_INDEXES } from './deployments/model';
import { RETIRED_SCHEDULE_INDEXES, ScheduleModel } from './schedules/model';
import './secrets/model';
import './freezes/model';

/** Connects and waits for every model's indexes, so unique constraints hold from the first request. */
export async function connectDatabase(uri: string): Promise<typeof mongoose> {
  await mongoose.connect(uri, { serverSelectionTimeoutMS: 30_000 });
  for (const name of RETIRED_SERVER_INDEXES) await ServerModel.collection.dropIndex(name).catch(() => undefined);
  for (const name of RETIRED_RUN_INDEXES) await DeploymentRunModel.collection.dropIndex(name).catch(() => undefined);
  for (const name of RETIRED_SCHEDULE_INDEXES) await ScheduleModel.collection.dropIndex(name).catch(() => undefined);
  await Promise.all(mongoose.modelNames().map((name) => mongoose.model(name).init()));
  return mongoose;
}
