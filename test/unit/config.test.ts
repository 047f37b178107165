import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../src/config';
import { connectionOptions } from '../../src/domain/temporal/connection';

describe('configuration from the environment', () => {
  test('defaults', () => {
    const config = loadConfig({});
    expect(config.http).toMatchObject({ host: '127.0.0.1', port: 3000, portExplicit: false });
    expect(config.temporal).toMatchObject({ namespace: 'default', taskQueue: 'bosun', port: 7233, uiPort: 8233 });
    expect(config.servers.healthIntervalSeconds).toBe(60);
    expect(config.worker).toEqual({ maxConcurrentSteps: 200, stickyTimeoutSeconds: 10, heartbeatTimeoutSeconds: 15, shutdownGraceSeconds: 10, workflowCache: 250 });
    expect(loadConfig({ WORKER_WORKFLOW_CACHE: '40' }).worker.workflowCache).toBe(40);
    expect(loadConfig({ WORKER_HEARTBEAT_TIMEOUT_SECONDS: '6' }).worker.heartbeatTimeoutSeconds).toBe(6);
    expect(loadConfig({ WORKER_STICKY_TIMEOUT_SECONDS: '3' }).worker.stickyTimeoutSeconds).toBe(3);
    expect(config.notifications).toStrictEqual({ retrySeconds: 5, maxAttempts: undefined });
    expect(loadConfig({ NOTIFICATION_RETRY_SECONDS: '1' }).notifications.retrySeconds).toBe(1);
    expect(loadConfig({ NOTIFICATION_MAX_ATTEMPTS: '3' }).notifications.maxAttempts).toBe(3);
    expect(config.ssh).toEqual({ connectTimeoutMs: 10_000, maxChannelsPerConnection: 8, maxConnections: 256, idleTimeoutMs: 300_000 });
    expect(loadConfig({ SSH_POOL_IDLE_SECONDS: '30' }).ssh.idleTimeoutMs).toBe(30_000);
    expect(loadConfig({ SSH_POOL_MAX: '3' }).ssh.maxConnections).toBe(3);
    expect(config.memory).toEqual({ heapGrowthPercent: 30, returnAfterBursts: true });
    expect(loadConfig({ HEAP_RETURN_AFTER_BURSTS: '0' }).memory.returnAfterBursts).toBe(false);
    expect(loadConfig({ HEAP_GROWTH_PERCENT: '0' }).memory.heapGrowthPercent).toBe(0);
    expect(config.home).toMatch(/\.bosun$/);
    expect(Object.isFrozen(config)).toBe(true);
  });

  test('a bad value names the variable', () => {
    expect(() => loadConfig({ PORT: '99999' })).toThrow(ConfigError);
    expect(() => loadConfig({ PORT: '99999' })).toThrow(/PORT \("99999"\)/);
    expect(() => loadConfig({ SERVER_HEALTH_INTERVAL_SECONDS: '0' })).toThrow(/SERVER_HEALTH_INTERVAL_SECONDS/);
    expect(() => loadConfig({ LOG_LEVEL: 'loud' })).toThrow(/LOG_LEVEL/);
    expect(() => loadConfig({ WORKER_STICKY_TIMEOUT_SECONDS: '0' })).toThrow(/WORKER_STICKY_TIMEOUT_SECONDS/);
    // Below 5 s a busy worker's heartbeats (every second or two) could miss it, and its steps run twice.
    expect(() => loadConfig({ WORKER_HEARTBEAT_TIMEOUT_SECONDS: '2' })).toThrow(/WORKER_HEARTBEAT_TIMEOUT_SECONDS/);
    expect(() => loadConfig({ NOTIFICATION_RETRY_SECONDS: '0' })).toThrow(/NOTIFICATION_RETRY_SECONDS/);
    expect(() => loadConfig({ NOTIFICATION_RETRY_SECONDS: '7200' })).toThrow(/NOTIFICATION_RETRY_SECONDS/);
    expect(() => loadConfig({ NOTIFICATION_MAX_ATTEMPTS: '0' })).toThrow(/NOTIFICATION_MAX_ATTEMPTS/);
    expect(() => loadConfig({ SSH_POOL_MAX: '0' })).toThrow(/SSH_POOL_MAX/);
    expect(() => loadConfig({ SSH_POOL_IDLE_SECONDS: '0' })).toThrow(/SSH_POOL_IDLE_SECONDS/);
    expect(() => loadConfig({ HEAP_GROWTH_PERCENT: '-5' })).toThrow(/HEAP_GROWTH_PERCENT/);
    expect(() => loadConfig({ HEAP_GROWTH_PERCENT: 'lots' })).toThrow(/HEAP_GROWTH_PERCENT/);
  });

  test('secret values are never echoed in the message', () => {
    expect(() => loadConfig({ BOSUN_SECRET_KEY: '' })).toThrow(/BOSUN_SECRET_KEY \("<hidden>"\)/);
  });

  describe('a Temporal cluster or Temporal Cloud', () => {
    test('plain gRPC by default; an API key means TLS too', () => {
      expect(connectionOptions(loadConfig({}).temporal.security)).toEqual({});
      const cloud = loadConfig({ TEMPORAL_API_KEY: 'tcld-key-123' }).temporal.security;
      expect(cloud.tls).toBe(true);
      expect(connectionOptions(cloud)).toEqual({ tls: {}, apiKey: 'tcld-key-123' });
    });

    test('mTLS reads the certificate pair and the CA from their files', () => {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'bosun-tls-'));
      for (const name of ['client.pem', 'client.key', 'ca.pem']) writeFileSync(path.join(dir, name), `-----BEGIN ${name}-----\n`);
      const security = loadConfig({
        TEMPORAL_TLS_CERT: path.join(dir, 'client.pem'), TEMPORAL_TLS_KEY: path.join(dir, 'client.key'),
        TEMPORAL_TLS_CA: path.join(dir, 'ca.pem'), TEMPORAL_TLS_SERVER_NAME: 'temporal.internal',
      }).temporal.security;
      const { tls } = connectionOptions(security);
      expect(tls?.serverNameOverride).toBe('temporal.internal');
      expect(tls?.clientCertPair?.crt.toString()).toBe('-----BEGIN client.pem-----\n');
      expect(tls?.clientCertPair?.key.toString()).toBe('-----BEGIN client.key-----\n');
      expect(tls?.serverRootCACertificate?.toString()).toBe('-----BEGIN ca.pem-----\n');
    });

    test('half a certificate pair stops start-up, naming the missing half; the key value is never shown', () => {
      expect(() => loadConfig({ TEMPORAL_TLS_CERT: '/etc/bosun/client.pem' })).toThrow(/TEMPORAL_TLS_KEY \(unset\): required with its pair/);
      expect(() => loadConfig({ TEMPORAL_TLS: 'maybe', TEMPORAL_API_KEY: 'tcld-key-123' })).toThrow(/TEMPORAL_TLS/);
      try {
        loadConfig({ TEMPORAL_TLS: 'maybe', TEMPORAL_API_KEY: 'tcld-key-123' });
      } catch (error) {
        expect((error as Error).message).not.toContain('tcld-key-123');
      }
    });
  });

  describe('the LLM planner', () => {
    test('is off by default: conversations use the built-in rules', () => {
      expect(loadConfig({}).planner).toEqual({ llm: undefined });
    });

    test('is on with LLM_BASE_URL and LLM_MODEL, with its limits defaulted', () => {
      const config = loadConfig({ LLM_BASE_URL: 'http://127.0.0.1:11434/v1', LLM_MODEL: 'qwen2.5-coder:14b' });
      expect(config.planner.llm).toEqual({ baseUrl: 'http://127.0.0.1:11434/v1', apiKey: undefined, model: 'qwen2.5-coder:14b', maxAttempts: 3, maxReplans: 2, timeoutMs: 60_000 });
    });

    test('takes a key and its limits from the environment', () => {
      const config = loadConfig({
        LLM_BASE_URL: 'https://api.openai.com/v1', LLM_MODEL: 'gpt-4.1-mini', LLM_API_KEY: 'sk-abc',
        LLM_MAX_ATTEMPTS: '5', LLM_MAX_REPLANS: '0', LLM_TIMEOUT_MS: '30000',
      });
      expect(config.planner.llm).toEqual({ baseUrl: 'https://api.openai.com/v1', apiKey: 'sk-abc', model: 'gpt-4.1-mini', maxAttempts: 5, maxReplans: 0, timeoutMs: 30_000 });
    });

    test('half a configuration names what is missing', () => {
      expect(() => loadConfig({ LLM_BASE_URL: 'http://127.0.0.1:8000/v1' })).toThrow(ConfigError);
      expect(() => loadConfig({ LLM_BASE_URL: 'http://127.0.0.1:8000/v1' })).toThrow(/LLM_MODEL \(unset\): required with LLM_BASE_URL/);
      expect(() => loadConfig({ LLM_MODEL: 'llama3' })).toThrow(/LLM_BASE_URL \(unset\): required with LLM_MODEL/);
      const keyOnly = () => loadConfig({ LLM_API_KEY: 'sk-secret-value' });
      expect(keyOnly).toThrow(/LLM_BASE_URL \(unset\).*\n.*LLM_MODEL \(unset\)/);
      expect(keyOnly).not.toThrow(/sk-secret-value/);
    });

    test('bad values name the variable, and the key is never echoed', () => {
      expect(() => loadConfig({ LLM_BASE_URL: 'localhost:11434', LLM_MODEL: 'm' })).toThrow(/LLM_BASE_URL \("localhost:11434"\): must be an http\(s\) URL/);
      expect(() => loadConfig({ LLM_BASE_URL: 'http://h/v1', LLM_MODEL: 'm', LLM_MAX_ATTEMPTS: '0' })).toThrow(/LLM_MAX_ATTEMPTS/);
      expect(() => loadConfig({ LLM_BASE_URL: 'http://h/v1', LLM_MODEL: 'm', LLM_MAX_REPLANS: '-1' })).toThrow(/LLM_MAX_REPLANS/);
      expect(() => loadConfig({ LLM_BASE_URL: 'http://h/v1', LLM_MODEL: 'm', LLM_TIMEOUT_MS: 'soon' })).toThrow(/LLM_TIMEOUT_MS/);
      expect(() => loadConfig({ LLM_API_KEY: '  ' })).toThrow(/LLM_API_KEY \("<hidden>"\)/);
    });
  });
});
