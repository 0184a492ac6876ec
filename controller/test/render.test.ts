/** renderConfig: the directives that matter, escaping of manifest values, and nginx -t on the result. */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import execa from 'execa';
import { buildModel, finalizeModel } from '../src/model';
import { ensurePrefixDirs } from '../src/apply/files';
import { prefixLayout, renderConfig } from '../src/render';
import { quote } from '../src/render/format';
import * as f from './model-fixtures';
import { defaultNginxBinary, hasHttp2Directive, nginxTempPathModules, nginxVersion, parseTempPathModules } from '../src/apply/nginx-binary';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-render-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

function simpleGraph() {
  return f.graph([f.listener(8080, [f.attach(f.route('r', [f.rule(0, [f.prefix('/api')], [f.backend('api', 9000)])], { hostnames: ['a.test'] }))])]);
}

/** Writes the files into <dir>/conf and runs `nginx -t` on them. */
async function nginxTest(files: Record<string, string>, prefix: string, binary = defaultNginxBinary()) {
  const conf = path.join(prefix, 'conf');
  fs.mkdirSync(conf, { recursive: true });
  ensurePrefixDirs(prefixLayout(prefix));
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(conf, name), text);
  return execa(binary, ['-t', '-p', prefix + '/', '-e', 'stderr', '-c', path.join(conf, 'nginx.conf')], { reject: false, all: true });
}

describe('nginx string escaping', () => {
  test('quote() escapes backslashes and double quotes', () => {
    expect(quote('a"b\\c')).toBe('"a\\"b\\\\c"');
    expect(quote('$x')).toBe('"$x"');
  });

  test('manifest values cannot inject directives, and nginx -t accepts the result', async () => {
    const evil = '"; return 200 "pwned"; #';
    const g = f.graph([
      f.listener(8080, [
        // Alone on its host, the Exact path gets a location of its own (nothing dispatches there).
        f.attach(f.route('evil-exact', [f.rule(0, [f.exact('/a' + evil)], [f.backend('a', 9000)])], { hostnames: ['exact.test'] })),
        f.attach(
          f.route('evil', [
            f.rule(0, [f.exact('/a' + evil)], [f.backend('a', 9000)]),
            f.rule(1, [f.prefix('/b', { headers: [{ name: 'X-E', type: 'Exact', value: evil + '} server {' }] })], [f.backend('a', 9000)]),
            f.rule(2, [f.regex('/c\\"[0-9]+\\\\')], [f.backend('a', 9000)]),
            f.rule(3, [f.prefix('/d', { queryParams: [{ name: 'q"', type: 'RegularExpression', value: '^"\\d+;$' }] })], [f.backend('a', 9000)]),
          ], { hostnames: ['evil.test'] }),
        ),
      ]),
    ]);
    const prefix = path.join(tmp, 'evil');
    const { files } = renderConfig(buildModel(g), { listenAddress: '127.0.0.1', prefix });
    const all = Object.values(files).join('\n');
    expect(all).not.toMatch(/^\s*return 200 "pwned"/m);
    expect(files['servers.conf']).toContain('location = "/a\\"; return 200 \\"pwned\\"; #"');
    const res = await nginxTest(files, prefix);
    expect(res.all).toMatch(/test is successful/);
  });
});

describe('rendered directives', () => {
  const prefix = path.join(tmp, 'plain');
  const { files } = renderConfig(buildModel(simpleGraph()), { listenAddress: '127.0.0.2', prefix, workerProcesses: 3, errorLogLevel: 'warn' });

  test('listens on the listen address and port; a catch-all default server per port', () => {
    expect(files['servers.conf']).toContain('listen 127.0.0.2:8080 default_server;');
    expect(files['servers.conf']).toContain('listen 127.0.0.2:8080;\n    server_name "a.test";');
  });

  test('pid, logs and temp files live in the prefix', () => {
    const main = files['nginx.conf'];
    expect(main).toContain(`pid "${prefix}/run/nginx.pid";`);
    expect(main).toContain(`error_log "${prefix}/logs/error.log" warn;`);
    expect(main).toContain('error_log stderr warn;');
    expect(main).toContain(`proxy_temp_path "${prefix}/temp/proxy";`);
    expect(main).toContain(`client_body_temp_path "${prefix}/temp/client_body";`);
    expect(main).toContain('worker_processes 3;');
  });

  test('fastcgi, uwsgi and scgi temp paths only for a binary that has those modules', () => {
    expect(files['nginx.conf']).not.toMatch(/fastcgi|uwsgi|scgi/);
    const debian = renderConfig(buildModel(simpleGraph()), { listenAddress: '127.0.0.2', prefix, tempPathModules: ['fastcgi', 'uwsgi', 'scgi'] });
    expect(debian.files['nginx.conf']).toContain(`fastcgi_temp_path "${prefix}/temp/fastcgi";`);
    expect(debian.files['nginx.conf']).toContain(`scgi_temp_path "${prefix}/temp/scgi";`);
    expect(parseTempPathModules('configure arguments: --prefix=/x --without-http_fastcgi_module --without-http_scgi_module')).toEqual(['uwsgi']);
    expect(parseTempPathModules('configure arguments: --with-cc-opt=-O2 --http-fastcgi-temp-path=/var/lib/nginx/fastcgi')).toEqual(['fastcgi', 'uwsgi', 'scgi']);
  });

  // The project's build (scripts/build-nginx.sh) lacks those modules and refuses their
  // directives; Debian's 1.22 has them, with temp paths a non-root nginx cannot create.
  const binaries = [defaultNginxBinary(), ...(fs.existsSync('/usr/sbin/nginx') ? ['/usr/sbin/nginx'] : [])];
  test.each(binaries)('%s accepts the config rendered for the modules it has (nginx -V)', async (binary) => {
    const modules = nginxTempPathModules(binary);
    const dir = path.join(tmp, `modules-${binaries.indexOf(binary)}`);
    const g = simpleGraph();
    // Before 1.25.1 there is no `http2 on` (graph/routekinds.ts).
    if (!hasHttp2Directive(nginxVersion(binary))) g.nginx = { http2On: false, h2cPorts: [] };
    const mine = renderConfig(buildModel(g), { listenAddress: '127.0.0.2', prefix: dir, tempPathModules: modules });
    const res = await nginxTest(mine.files, dir, binary);
    expect(res.all).toMatch(/test is successful/);
    if (modules.length === 0) {
      const other = renderConfig(buildModel(simpleGraph()), { listenAddress: '127.0.0.2', prefix: dir, tempPathModules: ['fastcgi'] });
      expect((await nginxTest(other.files, dir, binary)).all).toMatch(/unknown directive "fastcgi_temp_path"/);
    }
  });

  test('upstreams use keepalive and HTTP/1.1 with the Host the client sent', () => {
    expect(files['upstreams.conf']).toMatch(/upstream b_default__api_80 \{\n\s+server 127\.0\.0\.1:9000 max_fails=0;\n\s+keepalive 64;/);
    expect(files['nginx.conf']).toContain('proxy_http_version 1.1;');
    expect(files['nginx.conf']).toContain('proxy_set_header Host $portcullis_host;');
  });

  test('passes nginx -t', async () => {
    const res = await nginxTest(files, prefix);
    expect(res.all).toMatch(/test is successful/);
  });

  test('bad render options are refused with a clear error', () => {
    expect(() => renderConfig(buildModel(simpleGraph()), { listenAddress: '127.0.0.1', prefix, errorLogLevel: 'loud' })).toThrow(/errorLogLevel/);
    expect(() => renderConfig(buildModel(simpleGraph()), { listenAddress: '127.0.0.1', prefix: '/tmp/' + 'x'.repeat(120) })).toThrow(/too long/);
  });
});

describe('rule retries', () => {
  const prefix = path.join(tmp, 'retry');
  const endpoints = [{ address: '10.0.0.1', port: 8080 }, { address: '10.0.0.2', port: 8080 }];
  const g = f.graph([f.listener(8080, [f.attach(f.route('r', [
    { ...f.rule(0, [f.prefix('/retry')], [f.backend('api', 9000, { endpoints })]), retry: { codes: [500, 503], attempts: 2 }, timeouts: { requestMs: 3000, backendRequestMs: 500 } },
    f.rule(1, [f.prefix('/plain')], [f.backend('api', 9000, { endpoints })]),
  ], { hostnames: ['a.test'] }))])]);
  const { files } = renderConfig(buildModel(g), { listenAddress: '127.0.0.2', prefix });

  test('retried on connection errors, timeouts and the listed codes, whatever the method, in attempts + 1 tries', () => {
    expect(files['servers.conf']).toContain('proxy_next_upstream "error" "timeout" "http_500" "http_503" "non_idempotent";\n        proxy_next_upstream_tries 3;');
  });

  test('backendRequest bounds each attempt, request all of them', () => {
    const retried = files['servers.conf'].slice(files['servers.conf'].indexOf('proxy_connect_timeout'));
    expect(retried).toMatch(/^proxy_connect_timeout "500ms";\n\s+proxy_send_timeout "500ms";\n\s+proxy_read_timeout "500ms";\n[^}]*proxy_next_upstream_timeout "3000ms";/);
    // once per location of the retrying rule (= and prefix), never the per-attempt time
    expect(files['servers.conf'].match(/proxy_next_upstream_timeout .*/g)).toEqual(['proxy_next_upstream_timeout "3000ms";', 'proxy_next_upstream_timeout "3000ms";']);
  });

  test('the retrying rule has an upstream of its own with an entry per try; the plain rule keeps one entry per endpoint', () => {
    expect(files['upstreams.conf']).toContain('upstream b_default__api_80_t3 {\n' + '    server 10.0.0.1:8080 max_fails=0;\n    server 10.0.0.2:8080 max_fails=0;\n'.repeat(2) + '    keepalive 64;');
    expect(files['upstreams.conf']).toContain('upstream b_default__api_80 {\n    server 10.0.0.1:8080 max_fails=0;\n    server 10.0.0.2:8080 max_fails=0;\n    keepalive 64;');
  });

  test('passes nginx -t', async () => {
    expect((await nginxTest(files, prefix)).all).toMatch(/test is successful/);
  });
});

describe('session persistence', () => {
  const prefix = path.join(tmp, 'session');
  const endpoints = [{ address: '10.0.0.1', port: 8080 }, { address: '10.0.0.2', port: 8080 }];
  const g = f.graph([f.listener(8080, [f.attach(f.route('r', [
    { ...f.rule(0, [f.prefix('/c')], [f.backend('api', 9000, { endpoints })]), session: { type: 'Cookie', name: 'a$b.c', maxAgeSeconds: 60 } },
    { ...f.rule(1, [f.prefix('/h')], [f.backend('api', 9000, { endpoints }), f.backend('other', 9001)]), session: { type: 'Header', name: 'X-Session' } },
  ], { hostnames: ['a.test'] }))])]);
  const { files } = renderConfig(buildModel(g), { listenAddress: '127.0.0.2', prefix });

  test('a cookie session: the token from the Cookie header (the name taken literally), else a new one handed out with Set-Cookie', () => {
    expect(files['maps.conf']).toMatch(/map \$http_cookie (\$pc_sk_[0-9a-f]{16}) \{\n    "~\(\?:\^\|;\) \*a\\\\\$b\\\\\.c=\(\[\^;\]\+\)" \$1;\n    default \$request_id;\n\}/);
    expect(files['maps.conf']).toContain('default "a${pc_dollar}b.c=${request_id}; Path=/; HttpOnly; Max-Age=60";');
    expect(files['servers.conf']).toMatch(/add_header "Set-Cookie" \$pc_ss_[0-9a-f]{16} always;/);
  });

  test('a header session: the header\'s variable, and the same header on the response when the client sent none', () => {
    expect(files['maps.conf']).toMatch(/map \$http_x_session \$pc_sk_[0-9a-f]{16} \{\n    "" \$request_id;\n    default \$http_x_session;\n\}/);
    expect(files['servers.conf']).toMatch(/add_header "X-Session" \$pc_ss_[0-9a-f]{16} always;/);
  });

  test('the rule\'s upstreams hash the token, and a weighted split hashes it too', () => {
    expect(files['upstreams.conf'].match(/hash \$pc_sk_[0-9a-f]{16} consistent;/g)).toHaveLength(3);
    expect(files['maps.conf']).toMatch(/split_clients "\$pc_sk_[0-9a-f]{16}" \$ps_\w+ \{/);
  });

  test('passes nginx -t', async () => {
    expect((await nginxTest(files, prefix)).all).toMatch(/test is successful/);
  });
});

describe('policy fields render at their level', () => {
  const dispatching = f.graph([
    f.listener(8080, [
      f.attach(
        f.route('r', [f.rule(0, [f.prefix('/api', { headers: [{ name: 'X-A', type: 'Exact', value: '1' }] })], [f.backend('api', 9000)])], {
          hostnames: ['a.test'],
        }),
      ),
    ]),
  ]);
  const model = buildModel(dispatching);
  model.http.limitReqZones = [{ name: 'default_rl_p_rule0', key: '$binary_remote_addr', size: '10m', rate: '5r/s' }];
  model.http.settings = { proxyBuffering: false, proxyBufferSize: '8k' };
  const s = model.servers.find((x) => x.serverNames[0] === 'a.test')!;
  s.settings = { clientMaxBodySize: '2m' };
  s.ruleLocations[0].settings = {
    limitReq: [{ zone: 'default_rl_p_rule0', burst: 3 }],
    limitReqStatus: 429,
    limitReqLogLevel: 'warn',
    limitReqDryRun: true,
    proxyBuffers: { number: 8, size: '4k' },
    proxyBusyBuffersSize: '16k',
    clientMaxBodySize: '100',
  };
  finalizeModel(model);
  const prefix = path.join(tmp, 'policies');
  const { files } = renderConfig(model, { listenAddress: '127.0.0.1', prefix });

  test('http: limit_req_zone and proxy buffering', () => {
    expect(files['nginx.conf']).toContain('limit_req_zone "$binary_remote_addr" "zone=default_rl_p_rule0:10m" "rate=5r/s";');
    expect(files['nginx.conf']).toContain('proxy_buffering off;');
    expect(files['nginx.conf']).toContain('proxy_buffer_size "8k";');
  });

  test('server and per-rule named location', () => {
    expect(files['servers.conf']).toMatch(/server_name "a\.test";\n\s+client_max_body_size "2m";/);
    const named = files['servers.conf'].split('location @rule_default_r_0 {')[1].split('}')[0];
    expect(named).toContain('limit_req "zone=default_rl_p_rule0" "burst=3";');
    expect(named).toContain('limit_req_status 429;');
    expect(named).toContain('limit_req_log_level "warn";');
    expect(named).toContain('limit_req_dry_run on;');
    expect(named).toContain('proxy_buffers 8 "4k";');
    expect(named).toContain('proxy_busy_buffers_size "16k";');
    expect(named).toContain('client_max_body_size "100";');
    expect(named).toMatch(/if \(\$pb_100\) \{\s+return 413;/);
  });

  test('a rule that every location proxies inline gets no named location; its settings go inline', () => {
    const m = buildModel(simpleGraph());
    const server = m.servers.find((x) => x.serverNames[0] === 'a.test')!;
    server.ruleLocations[0].settings = { proxyBuffering: false };
    finalizeModel(m);
    const text = renderConfig(m, { listenAddress: '127.0.0.1', prefix }).files['servers.conf'];
    expect(text).not.toContain('location @rule_default_r_0');
    expect(text.split('location = "/api" {')[1].split('}')[0]).toContain('proxy_buffering off;');
  });

  test('passes nginx -t', async () => {
    const res = await nginxTest(files, prefix);
    expect(res.all).toMatch(/test is successful/);
  });
});
