import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { ALERT_TESTS_FILE, ALERTS_FILE, COMPOSE_FILE, DASHBOARD_FILE, PROMETHEUS_CONFIG_FILE, ROOT } from '../../helpers/monitoring.ts';

/**
 * deploy/: the alert rules pass `promtool check rules` and their unit tests
 * (`promtool test rules`), Prometheus's configuration passes `promtool check config`, and
 * docker-compose.yml's `monitoring` profile mounts what exists. promtool comes with Debian's
 * `prometheus` package (.ci/run installs it); without it these fail under CI and are skipped
 * elsewhere, saying so in one line.
 */
const PROMTOOL = process.env.PROMTOOL_PATH ?? 'promtool';
const promtoolMissing = spawnSync(PROMTOOL, ['--version']).error
  ? `promtool is not installed: run \`apt-get install -y prometheus\` (as root, then stop its service), or set PROMTOOL_PATH`
  : undefined;
const ci = process.env.CI;
const isCi = ci !== undefined && ci !== '' && ci !== '0' && ci !== 'false';

function promtool(...args: string[]): string {
  try {
    return execFileSync(PROMTOOL, args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`promtool ${args.join(' ')} failed:\n${e.stdout ?? ''}${e.stderr ?? e.message}`);
  }
}

if (promtoolMissing && !isCi) console.warn(`[promtool tests skipped] ${promtoolMissing}`);

describe.skipIf(promtoolMissing !== undefined && !isCi)('alert rules (promtool)', () => {
  it('are valid rules', () => {
    if (promtoolMissing) throw new Error(promtoolMissing);
    expect(promtool('check', 'rules', ALERTS_FILE)).toMatch(/SUCCESS: \d+ rules found/);
  });

  it('pass their unit tests: each alert fires on a series that should fire it and on no other', () => {
    if (promtoolMissing) throw new Error(promtoolMissing);
    expect(promtool('test', 'rules', ALERT_TESTS_FILE)).toMatch(/SUCCESS/);
  });

  it("Prometheus's configuration is valid and loads the rules", () => {
    if (promtoolMissing) throw new Error(promtoolMissing);
    expect(promtool('check', 'config', PROMETHEUS_CONFIG_FILE)).toMatch(/SUCCESS: \d+ rules found/);
  });
});

describe('alert rule tests', () => {
  it('cover every alert, firing and quiet', () => {
    const rules = (parseYaml(readFileSync(ALERTS_FILE, 'utf8')) as { groups: { rules: { alert?: string }[] }[] }).groups.flatMap((g) =>
      g.rules.flatMap((r) => (r.alert ? [r.alert] : [])),
    );
    const tests = parseYaml(readFileSync(ALERT_TESTS_FILE, 'utf8')) as {
      tests: { alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[] }[];
    };
    const cases = tests.tests.flatMap((t) => t.alert_rule_test ?? []);
    for (const alert of rules) {
      const own = cases.filter((c) => c.alertname === alert);
      expect(own.some((c) => c.exp_alerts.length > 0), `${alert} fires in a test`).toBe(true);
      expect(own.some((c) => c.exp_alerts.length === 0), `${alert} stays quiet in a test`).toBe(true);
    }
  });
});

describe("docker-compose.yml's monitoring profile", () => {
  // No Docker engine here: the file is parsed as YAML and what the profile mounts is checked.
  const compose = parseYaml(readFileSync(COMPOSE_FILE, 'utf8')) as {
    services: Record<string, { profiles?: string[]; volumes?: string[]; image?: string }>;
    volumes: Record<string, unknown>;
  };

  it('is opt in: Prometheus and Grafana run only with --profile monitoring, the rest always', () => {
    const profiled = Object.entries(compose.services).filter(([, s]) => s.profiles);
    expect(profiled.map(([name, s]) => [name, s.profiles])).toEqual([
      ['prometheus', ['monitoring']],
      ['grafana', ['monitoring']],
    ]);
  });

  it('mounts files that exist, and named volumes it declares', () => {
    for (const name of ['prometheus', 'grafana']) {
      for (const volume of compose.services[name]!.volumes ?? []) {
        const [source] = volume.split(':') as [string];
        if (source.startsWith('./')) expect(existsSync(join(ROOT, source)), `${name} mounts ${source}`).toBe(true);
        else expect(compose.volumes, `${name}'s volume ${source}`).toHaveProperty(source);
      }
    }
    expect(compose.services.prometheus!.volumes).toContain('./deploy/prometheus/alerts.yml:/etc/prometheus/alerts.yml:ro');
  });

  it("scrapes the compose file's API processes under the job the rules select", () => {
    const config = parseYaml(readFileSync(PROMETHEUS_CONFIG_FILE, 'utf8')) as {
      rule_files: string[];
      scrape_configs: { job_name: string; dns_sd_configs: { names: string[]; port: number }[] }[];
    };
    expect(config.rule_files).toEqual(['alerts.yml']);
    const job = config.scrape_configs.find((c) => c.job_name === 'catalog');
    expect(job?.dns_sd_configs).toEqual([expect.objectContaining({ names: ['api'], port: 3000 })]);
    expect(compose.services).toHaveProperty('api');
  });

  it('provisions Grafana with the Prometheus data source and the dashboard', () => {
    const datasources = parseYaml(readFileSync(join(ROOT, 'deploy/grafana/provisioning/datasources/prometheus.yml'), 'utf8')) as {
      datasources: { type: string; url: string }[];
    };
    expect(datasources.datasources).toEqual([expect.objectContaining({ type: 'prometheus', url: 'http://prometheus:9090' })]);
    const providers = parseYaml(readFileSync(join(ROOT, 'deploy/grafana/provisioning/dashboards/catalog.yml'), 'utf8')) as {
      providers: { options: { path: string } }[];
    };
    const dashboardsDir = providers.providers[0]!.options.path;
    expect(compose.services.grafana!.volumes).toContain(`./deploy/grafana/catalog-dashboard.json:${dashboardsDir}/catalog-dashboard.json:ro`);
    const dashboard = JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8')) as { templating: { list: { name: string; type: string }[] } };
    expect(dashboard.templating.list).toContainEqual(expect.objectContaining({ name: 'datasource', type: 'datasource' }));
  });
});
