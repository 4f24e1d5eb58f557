<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Ops;

use PHPUnit\Framework\TestCase;
use Weft\Cli\Config\AvailableCpus;
use Weft\Tests\Support\ServerProcess;

/**
 * deploy/kubernetes/ without a cluster: kubectl builds and decodes it offline, the kubernetes-models
 * schemas validate every document, the numbers that must agree (ports, the stop sequence, the CPU limit
 * that sizes the workers) agree, Weft accepts the configuration, and a real server started with it
 * answers the probes the way the manifests expect. The tools are installed by scripts/setup.sh; a
 * missing one fails the test (it is a broken setup, not something to skip).
 */
final class KubernetesManifestsTest extends TestCase
{
    private const ROOT = __DIR__ . '/../../..';
    private const DIR = self::ROOT . '/deploy/kubernetes';
    private const VALIDATOR = self::ROOT . '/scripts/kubernetes-validate';
    private const MANIFESTS = ['configmap.yaml', 'deployment.yaml', 'service.yaml', 'poddisruptionbudget.yaml'];
    private const APP = __DIR__ . '/fixtures/ops-app.php';

    public function testKubectlBuildsTheKustomizationAndDecodesEveryManifestOffline(): void
    {
        [$code, $out, $err] = self::exec([self::kubectl(), 'kustomize', self::DIR]);
        self::assertSame(0, $code, $err);
        foreach (['kind: ConfigMap', 'kind: Deployment', 'kind: Service', 'kind: PodDisruptionBudget'] as $kind) {
            self::assertStringContainsString($kind, $out);
        }
        // Every file of the directory is in the kustomization, so `apply -k` applies all of them.
        $files = \array_map('basename', \glob(self::DIR . '/*.yaml') ?: []);
        self::assertEqualsCanonicalizing([...self::MANIFESTS, 'kustomization.yaml'], $files);
        foreach (self::MANIFESTS as $file) {
            self::object($file); // fails with kubectl's message when it cannot decode the file as an object
        }
    }

    public function testEveryDocumentMatchesTheKubernetesSchemas(): void
    {
        $files = \array_map(static fn ($f) => self::DIR . "/$f", self::MANIFESTS);
        [$code, $out, $err] = self::exec([self::node(), self::VALIDATOR . '/validate.mjs', ...$files]);
        self::assertSame(0, $code, $out . $err);
        self::assertStringContainsString('kubernetes-models: 4 valid document(s), 0 invalid', $out);

        // What `apply -k` sends, as one multi-document stream.
        [, $built] = self::exec([self::kubectl(), 'kustomize', self::DIR]);
        $stream = self::temp('built.yaml', $built);
        [$code, $out, $err] = self::exec([self::node(), self::VALIDATOR . '/validate.mjs', $stream]);
        self::assertSame(0, $code, $out . $err);
        self::assertStringContainsString('4 valid document(s), 0 invalid', $out);
    }

    /** The validator is no rubber stamp: a CPU limit that is no quantity, a port that is no number. */
    public function testTheValidatorRejectsABrokenManifest(): void
    {
        $deployment = (string) \file_get_contents(self::DIR . '/deployment.yaml');
        $broken = \str_replace(['cpu: "2"', 'containerPort: 8080'], ['cpu: "two"', 'containerPort: "eighty"'], $deployment);
        self::assertNotSame($deployment, $broken);
        $file = self::temp('broken.yaml', $broken . "---\napiVersion: v1\nkind: NoSuchKind\nmetadata: {name: x}\n");
        [$code, $out, $err] = self::exec([self::node(), self::VALIDATOR . '/validate.mjs', $file]);
        self::assertSame(1, $code, $out . $err);
        self::assertStringContainsString('/spec/template/spec/containers/0/resources/limits/cpu', $err);
        self::assertStringContainsString('/spec/template/spec/containers/0/ports/0/containerPort', $err);
        self::assertStringContainsString("no schema for apiVersion 'v1' kind 'NoSuchKind'", $err);
        self::assertStringContainsString('0 valid document(s), 2 invalid', $out);
    }

    public function testProbesServiceAndScrapeAnnotationsUseWeftsPorts(): void
    {
        $config = self::object('configmap.yaml')['data'];
        $deployment = self::object('deployment.yaml');
        $service = self::object('service.yaml');
        $pod = $deployment['spec']['template'];
        $container = self::container($deployment);
        $ports = \array_column($container['ports'], 'containerPort', 'name');

        // The metrics port listens on every address of the pod: the kubelet and Prometheus are outside.
        self::assertMatchesRegularExpression('/^0\.0\.0\.0:(\d+)$/', $config['WEFT_METRICS']);
        $metricsPort = (int) \explode(':', $config['WEFT_METRICS'])[1];
        self::assertSame($metricsPort, $ports['metrics']);
        self::assertSame('0.0.0.0', $config['WEFT_HOST']);
        self::assertSame((int) $config['WEFT_PORT'], $ports['http']);
        self::assertSame(['name' => 'weft-config'], $container['envFrom'][0]['configMapRef']);

        // Readiness is /health (503 while starting, stuck or draining); liveness is answered by the master
        // alone, never /health, so busy or booting workers never get the pod restarted.
        self::assertSame(['path' => '/health', 'port' => 'metrics'], $container['readinessProbe']['httpGet']);
        self::assertSame(['path' => '/metrics', 'port' => 'metrics'], $container['livenessProbe']['httpGet']);
        self::assertArrayNotHasKey('startupProbe', $container);

        $annotations = $pod['metadata']['annotations'];
        self::assertSame('true', $annotations['prometheus.io/scrape']);
        self::assertSame((string) $metricsPort, $annotations['prometheus.io/port']);
        self::assertSame('/metrics', $annotations['prometheus.io/path']);

        // The Service reaches the application port of exactly these pods.
        self::assertSame('http', $service['spec']['ports'][0]['targetPort']);
        self::assertSame($deployment['spec']['selector']['matchLabels'], $service['spec']['selector']);
        foreach ($deployment['spec']['selector']['matchLabels'] as $label => $value) {
            self::assertSame($value, $pod['metadata']['labels'][$label]);
        }
        self::assertSame($deployment['spec']['selector']['matchLabels'], self::object('poddisruptionbudget.yaml')['spec']['selector']['matchLabels']);
        // A rollout never has fewer ready pods than wanted.
        self::assertSame(0, $deployment['spec']['strategy']['rollingUpdate']['maxUnavailable']);
    }

    /**
     * preStop sleep (the endpoints' removal reaches every proxy), then SIGTERM: Weft drains within --grace
     * and kills what is left 1 s later. All of it must end before the kubelet's SIGKILL.
     */
    public function testTheStopSequenceEndsBeforeTheTerminationGracePeriod(): void
    {
        $config = self::object('configmap.yaml')['data'];
        $deployment = self::object('deployment.yaml');
        $container = self::container($deployment);
        $command = $container['lifecycle']['preStop']['exec']['command'];
        self::assertCount(2, $command);
        self::assertSame('sleep', $command[0]);
        self::assertMatchesRegularExpression('/^\d+$/', $command[1]);
        $preStop = (int) $command[1];
        self::assertGreaterThanOrEqual(3, $preStop, 'long enough for the endpoints removal to propagate');
        $grace = (float) $config['WEFT_GRACE'];
        $period = $deployment['spec']['template']['spec']['terminationGracePeriodSeconds'];
        self::assertLessThan($period, $preStop + $grace + 1.0, "preStop $preStop s + grace $grace s + 1 s must end before terminationGracePeriodSeconds $period s");
    }

    /** The CPU limit sizes the pool: no WEFT_WORKERS anywhere, and a quota of that limit gives ceil(limit) workers. */
    public function testTheCpuLimitSizesTheWorkers(): void
    {
        $config = self::object('configmap.yaml')['data'];
        $container = self::container(self::object('deployment.yaml'));
        self::assertArrayNotHasKey('WEFT_WORKERS', $config);
        self::assertNotContains('WEFT_WORKERS', \array_column($container['env'] ?? [], 'name'));
        $limit = $container['resources']['limits']['cpu'] ?? null;
        self::assertIsString($limit, 'resources.limits.cpu is set');
        self::assertArrayHasKey('memory', $container['resources']['limits']);
        $cpus = \str_ends_with($limit, 'm') ? (int) \substr($limit, 0, -1) / 1000 : (float) $limit;
        self::assertGreaterThan(0, $cpus);

        // What the container runtime makes of the limit on cgroup v2 (with a cgroup namespace, the pod's
        // container sees its own cgroup as "/"), on a node of 16 CPUs.
        $root = \sys_get_temp_dir() . '/weft-k8s-cg-' . \bin2hex(\random_bytes(4));
        try {
            @\mkdir("$root/proc/self", 0777, true);
            @\mkdir("$root/cg", 0777, true);
            \file_put_contents("$root/proc/self/status", "Cpus_allowed_list:\t0-15\n");
            \file_put_contents("$root/proc/self/cgroup", "0::/\n");
            \file_put_contents("$root/cg/cpu.max", \sprintf("%d 100000\n", (int) \round($cpus * 100000)));
            self::assertSame((int) \ceil($cpus), (new AvailableCpus("$root/proc", "$root/cg"))->detect());
        } finally {
            \exec('rm -rf ' . \escapeshellarg($root));
        }
    }

    /** Under the read-only root, /tmp is a volume: PHP's opcache lock file, the pid file and the control socket. */
    public function testTmpIsWritableUnderTheReadOnlyRoot(): void
    {
        $deployment = self::object('deployment.yaml');
        $container = self::container($deployment);
        self::assertTrue($container['securityContext']['readOnlyRootFilesystem']);
        $mounts = \array_column($container['volumeMounts'], 'name', 'mountPath');
        self::assertArrayHasKey('/tmp', $mounts);
        $volumes = \array_column($deployment['spec']['template']['spec']['volumes'], null, 'name');
        self::assertArrayHasKey('emptyDir', $volumes[$mounts['/tmp']]);
        self::assertStringStartsWith('/tmp/', self::environment()['WEFT_PID_FILE']);
        self::assertTrue($deployment['spec']['template']['spec']['securityContext']['runAsNonRoot']);
        self::assertIsInt($deployment['spec']['template']['spec']['securityContext']['runAsUser'], 'a numeric uid: runAsNonRoot cannot check the image\'s user name');
    }

    /** Every variable the manifests set is an option Weft knows, with a value it accepts. */
    public function testWeftAcceptsTheManifestsConfiguration(): void
    {
        $env = self::environment();
        [$code, $out, $err] = self::exec([\PHP_BINARY, self::ROOT . '/bin/weft', 'config'], $env);
        self::assertSame(0, $code, $out . $err);
        foreach (\array_keys($env) as $name) {
            self::assertMatchesRegularExpression('/\senv ' . $name . '$/m', $out, "$name is read as an option");
        }
    }

    /**
     * A real server with the manifests' configuration (on loopback and ephemeral ports): readiness and
     * liveness answer 200 once it serves; while its only worker is busy, liveness still answers; when it
     * stops with a request in flight, readiness turns 503 "draining", liveness still answers 200 (the pod
     * is not restarted mid-drain) and the request in flight completes.
     */
    public function testTheProbesOfARealServerStartingBusyAndDraining(): void
    {
        $env = self::environment();
        $server = new ServerProcess(
            [self::APP, '--workers', '1', '--host', '127.0.0.1', '--metrics', '127.0.0.1:0', '--log-format', 'text'],
            $env,
        );
        $line = ServerProcess::waitFor(static fn () => \preg_match('#Metrics on http://([\d.]+:\d+)/metrics#', $server->output(), $m) ? $m[1] : null, 10, 'the metrics address');
        $metrics = "http://$line";
        $container = self::container(self::object('deployment.yaml'));
        $readiness = $metrics . $container['readinessProbe']['httpGet']['path'];
        $liveness = $metrics . $container['livenessProbe']['httpGet']['path'];
        self::assertSame(200, MetricsTest::get($readiness)[0]);
        self::assertSame(200, MetricsTest::get($liveness)[0]);

        // The only worker computes without yielding for 1.5 s: the master answers the liveness probe all along.
        $busy = \stream_socket_client("tcp://{$server->address()}");
        \fwrite($busy, "GET /busy?ms=1500 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
        \usleep(200_000);
        [$status] = MetricsTest::get($liveness);
        self::assertSame(200, $status, 'liveness while every worker is busy');
        self::assertStringContainsString('busy', (string) \stream_get_contents($busy));

        // SIGTERM (what the kubelet sends after preStop) with a request in flight.
        $slow = \stream_socket_client("tcp://{$server->address()}");
        \fwrite($slow, "GET /sleep?s=2 HTTP/1.1\r\nHost: t\r\n\r\n");
        ServerProcess::waitFor(static fn () => \str_contains(MetricsTest::get($liveness)[2], 'weft_connections 1'), 10, 'the slow request to be counted');
        \posix_kill($server->masterPid(), \SIGTERM);
        [, , $body] = ServerProcess::waitFor(static function () use ($readiness) {
            $r = MetricsTest::get($readiness);
            return $r[0] === 503 ? $r : null;
        }, 5, 'readiness to turn 503 while draining');
        self::assertSame('draining', \json_decode($body, true)['reason']);
        self::assertSame(200, MetricsTest::get($liveness)[0], 'liveness while draining');
        $answer = (string) \stream_get_contents($slow);
        self::assertStringStartsWith('HTTP/1.1 200', $answer);
        self::assertStringContainsString('slept', $answer);
        ServerProcess::waitFor(static fn () => !$server->isRunning(), 10, 'the master to exit once drained');
        self::assertStringContainsString('Weft stopped', $server->output());
        self::assertStringNotContainsString('still running after the grace period', $server->output());
        $server->stop();
    }

    /** @return array<string, string> the container's environment: the ConfigMap, then its own env */
    private static function environment(): array
    {
        $env = self::object('configmap.yaml')['data'];
        foreach (self::container(self::object('deployment.yaml'))['env'] ?? [] as $var) {
            $env[$var['name']] = $var['value'];
        }
        return $env;
    }

    /** @return array<string, mixed> */
    private static function container(array $deployment): array
    {
        $containers = $deployment['spec']['template']['spec']['containers'];
        self::assertCount(1, $containers);
        return $containers[0];
    }

    /** The manifest as kubectl decodes it (`label --local` touches no cluster), as an array. */
    private static function object(string $file): array
    {
        [$code, $out, $err] = self::exec([self::kubectl(), 'label', '--local', '-o', 'json', '-f', self::DIR . "/$file", 'weft.test/decoded=1']);
        self::assertSame(0, $code, "kubectl cannot decode $file: $err");
        return \json_decode($out, true, 512, \JSON_THROW_ON_ERROR);
    }

    private static function kubectl(): string
    {
        $path = \trim((string) \shell_exec('command -v kubectl'));
        if ($path === '') {
            self::fail('kubectl is not installed: run bash scripts/setup.sh (it installs Debian\'s kubernetes-client)');
        }
        return $path;
    }

    private static function node(): string
    {
        $path = \trim((string) \shell_exec('command -v node'));
        if ($path === '') {
            self::fail('node is not installed: run bash scripts/setup.sh');
        }
        if (!\is_dir(self::VALIDATOR . '/node_modules/kubernetes-models')) {
            self::fail('scripts/kubernetes-validate/node_modules is missing: run bash scripts/setup.sh (npm ci there)');
        }
        return $path;
    }

    private static function temp(string $name, string $content): string
    {
        $file = \sys_get_temp_dir() . '/weft-k8s-' . \bin2hex(\random_bytes(4)) . "-$name";
        \file_put_contents($file, $content);
        \register_shutdown_function(static fn () => @\unlink($file));
        return $file;
    }

    /**
     * @param list<string> $command
     * @param array<string, string> $env added to this process's environment
     * @return array{int, string, string}
     */
    private static function exec(array $command, array $env = []): array
    {
        $process = \proc_open($command, [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes, self::ROOT, $env + \getenv());
        self::assertIsResource($process);
        $out = (string) \stream_get_contents($pipes[1]);
        $err = (string) \stream_get_contents($pipes[2]);
        \fclose($pipes[1]);
        \fclose($pipes[2]);
        return [\proc_close($process), $out, $err];
    }
}
