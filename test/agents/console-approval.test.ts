/// <reference lib="dom" />
import { randomBytes } from 'node:crypto';
import type { Browser } from 'playwright-core';
import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { eventually } from '../support/eventually';
import { launchBrowser, screenshot, signedInPage } from '../support/browser';
import { personToken, userWithToken, type User } from '../support/client';
import { agentAccount, agentOverHttp, type Agent } from '../support/mcp';

type Json = any;

/*
 * The agent's side and the person's side of one approval: the agent asks for a change over MCP and is
 * held; a person opens the link it was given in Chromium and approves in the console; the agent sees
 * the step run. The same page signed in with the agent's own token is refused.
 */
describe('an agent’s change, approved by a person in the console', () => {
  let bosun: SharedBosun;
  let browser: Browser;
  let ops: User;
  let serverId: string;
  let agent: Agent;
  let agentToken: string;

  beforeAll(async () => {
    bosun = await sharedBosun();
    ops = userWithToken(bosun, await bosun.token('console-agents', ['admin'], 'ops'));
    serverId = await ops.addServer({ title: 'web-1' });
    const account = await agentAccount(ops, 'claude');
    agentToken = account.token;
    agent = await agentOverHttp(bosun.url, account.token);
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await agent?.close();
    await bosun?.stop();
  });

  test('held for a person: the console link approves it, the agent’s own sign-in cannot', async () => {
    const file = `/tmp/bosun-console-agent-${randomBytes(3).toString('hex')}`;
    const started = await agent.call('run_commands', { server_id: serverId, commands: [`touch ${file}`, `ls ${file}`], reason: 'leave a mark for the release' });
    const { conversation_id: id, console_url: link } = started.data.conversations[0];
    const held = await eventually(() => agent.call('wait', { conversation_id: id, timeout_seconds: 10 }), (w) => w.data.status === 'awaiting_approval');
    expect(held.data.conversation.steps[0]).toMatchObject({ risk: 'change', approval: { decision: null } });

    // The agent's token in the console: no decision is offered (and the API refuses one: 403 people_only).
    const agentPage = await signedInPage(browser, bosun.url, agentToken);
    await agentPage.goto(link);
    await agentPage.getByText('a service account cannot').waitFor();
    expect(await agentPage.getByRole('group', { name: 'Decide on step 1' }).count()).toBe(0);
    await agentPage.close();

    const person = await personToken(ops, 'Alice', 'operator');
    const page = await signedInPage(browser, bosun.url, person.token);
    await page.goto(link);
    await page.getByText('leave a mark for the release').first().waitFor();
    const decide = page.getByRole('group', { name: 'Decide on step 1' });
    await decide.getByText('change').first().waitFor();
    await screenshot(page, 'agent-change-waiting');
    await decide.getByRole('button', { name: 'Approve and run' }).click();
    await page.locator('h1').getByText('completed').waitFor({ timeout: 30_000 });
    await page.getByText('by Alice (person)').waitFor();

    const done = await eventually(() => agent.call('wait', { conversation_id: id, timeout_seconds: 10 }), (w) => w.data.status === 'completed');
    expect(done.data.conversation.steps.map((s: Json) => [s.status, s.approval?.decided_by ?? null])).toEqual([
      ['completed', 'Alice (person)'],
      ['completed', null],
    ]);
  });
});
