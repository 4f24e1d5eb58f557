<?php

declare(strict_types=1);

namespace Weft\Cli;

use Weft\Bench\Baseline;
use Weft\Bench\Environment;
use Weft\Bench\Internal;
use Weft\Bench\Machine;
use Weft\Bench\Progress;
use Weft\Bench\Report\ReportWriter;
use Weft\Bench\Runner;
use Weft\Bench\Scenario;
use Weft\Bench\Scenario\AppScenario;
use Weft\Bench\Scenario\AppTarget;
use Weft\Bench\Scenario\CoreScenario;
use Weft\Bench\Scenario\HelloScenario;
use Weft\Bench\Scenario\LineScenario;
use Weft\Bench\Scenario\PreloadScenario;
use Weft\Bench\Scenario\SleepScenario;
use Weft\Bench\Scenario\Sql3Scenario;
use Weft\Bench\Scenario\UpstreamScenario;
use Weft\Bench\Settings;
use Weft\Bench\Tools;

/**
 * `bin/weft bench SCENARIO|all`: runs the classic experiments (docs/benchmarks.md) on this machine and writes
 * the report; `bin/weft bench app APP.php` measures the user's own app and recommends a configuration.
 */
final class BenchCommand
{
    /** In the order `all` runs them. */
    public const SCENARIOS = [
        'core' => CoreScenario::class,
        'hello' => HelloScenario::class,
        'sleep' => SleepScenario::class,
        'sql3' => Sql3Scenario::class,
        'upstream' => UpstreamScenario::class,
        'line' => LineScenario::class,
        'preload' => PreloadScenario::class,
        'static' => \Weft\Bench\Scenario\StaticScenario::class,
        'websocket' => \Weft\Bench\Scenario\WebSocketScenario::class,
        'framework' => \Weft\Bench\Scenario\FrameworkScenario::class,
    ];

    /** @return array<string, array{0: string, 1: mixed, 2: string, 3?: list<string>}> */
    public static function spec(): array
    {
        return [
            'quick' => ['bool', false, 'a smaller matrix (fewer worker counts, concurrency levels and variants per scenario) and shorter rows (see --duration); a row too short to judge at that length is marked so and left out of the verdicts'],
            'out' => ['string', null, 'output folder (default: var/bench/<timestamp>)'],
            'duration' => ['float', null, 'seconds of load per row (default: 10, quick: 2)'],
            'workers' => ['list', null, "override the matrix's worker counts (app: auto, the default, adapts them)"],
            'concurrency' => ['list', null, "override the matrix's concurrency levels (app: auto, the default, climbs until the knee)"],
            'modes' => ['list', null, "override the matrix's modes (fpm, sync, coroutine; hello and sleep: also netty)"],
            'loops' => ['list', null, "override the matrix's loop backends (select, epoll)"],
            'ab' => ['bool', false, 'also load every HTTP row with ab -k (apache2-utils)'],
            'varied' => ['bool', false, 'hello: add rows whose requests vary path, query and a header (wrk Lua script)'],
            'app' => ['list', null, 'the handlers to run: upstream weft, curl, streams (default weft); sql3 weft, pdo (default weft); sleep weft, usleep (default weft); framework laravel, symfony (default both)'],
            'routes' => ['list', null, 'framework: the routes to run: hello, sleep, sql3 (default all)'],
            'app-instances' => ['list', null, "framework: override the coroutine rows' framework instances per worker (serve --app-instances); app: one N for its coroutine rows"],
            'port-range' => ['string', null, 'servers listen only on ports in LOW-HIGH (default: any free port)'],
            'baseline' => ['string', null, 'also run every server row on another commit (or prepared checkout), interleaved, and report the ratios'],
            'help' => ['bool', false, 'show this help'],
        ];
    }

    /** The options of `bench app` on top of the common ones. @return array<string, array{0: string, 1: mixed, 2: string, 3?: list<string>}> */
    public static function appSpec(): array
    {
        return [
            'url' => ['string', null, 'request path to load (repeatable: several make a mix; default: /)'],
            'method' => ['string', 'GET', 'request method'],
            'body' => ['string', null, 'request body (@FILE reads it from a file)'],
            'header' => ['string', null, "request header 'Name: value' (repeatable)"],
            'script' => ['string', null, 'a wrk Lua script that makes the requests instead (for any mix)'],
            'p99' => ['string', '100ms', 'the p99 latency the recommendation must stay under (e.g. 50ms, 0.2s)'],
            'env' => ['string', null, 'NAME=value for the server (repeatable), e.g. DATABASE_URL=...'],
            'json' => ['bool', false, 'print the recommendation as JSON on stdout (for CI); progress stays on stderr'],
        ] + \array_diff_key(self::spec(), \array_flip(self::NOT_FOR_APP));
    }

    /** Common options that mean nothing to `bench app` (they choose rows of other scenarios). */
    private const NOT_FOR_APP = ['varied', 'app', 'routes'];

    /** @param list<string> $args */
    public function run(array $args): int
    {
        if (isset($args[0]) && \str_starts_with($args[0], '_')) {
            // Helper processes the runner starts itself (load clients, micro benchmarks).
            $name = \array_shift($args);
            $options = Options::parse($args, Internal::SPEC);
            $values = [];
            foreach (\array_keys(Internal::SPEC) as $option) {
                $values[$option] = $options->get($option);
            }
            try {
                return Internal::run($name, $values, $options->arguments);
            } catch (\InvalidArgumentException $e) {
                throw new UsageError($e->getMessage());
            }
        }
        if (($args[0] ?? null) === 'app') {
            return $this->app(\array_slice($args, 1), $args);
        }
        $options = Options::parse($args, self::spec());
        if ($options->get('help')) {
            echo "Usage: bin/weft bench SCENARIO|all [options]\n       bin/weft bench app APP.php [options]   (bin/weft bench app --help)\n\nScenarios: " . \implode(', ', \array_keys(self::SCENARIOS)) . ", all\n\n"
                . Options::help(self::spec()) . "\n";
            return 0;
        }
        $names = $options->arguments;
        if ($names === []) {
            throw new UsageError('bench needs a scenario: ' . \implode(', ', \array_keys(self::SCENARIOS)) . ', all, or app APP.php');
        }
        if (\in_array('all', $names, true)) {
            $names = \array_keys(self::SCENARIOS);
        }
        foreach ($names as $name) {
            if (!isset(self::SCENARIOS[$name])) {
                throw new UsageError("unknown scenario '$name' (expected: " . \implode(', ', \array_keys(self::SCENARIOS)) . ', all, app)');
            }
        }
        $settings = self::settings($options);
        $scenarios = \array_map(static fn (string $name): Scenario => new (self::SCENARIOS[$name])($settings), \array_values(\array_unique($names)));
        [$code] = $this->runScenarios($scenarios, $settings, $options, ['bin/weft', 'bench', ...$args]);
        return $code;
    }

    /**
     * `bench app APP.php`: the user's app across modes, workers and concurrency, then the recommendation
     * on stdout (as JSON with --json).
     *
     * @param list<string> $args
     * @param list<string> $argv
     */
    private function app(array $args, array $argv): int
    {
        foreach (self::NOT_FOR_APP as $name) {
            if (\in_array("--$name", $args, true) || \array_filter($args, static fn (string $a): bool => \str_starts_with($a, "--$name=")) !== []) {
                throw new UsageError("option '--$name' chooses rows of the classic scenarios (bin/weft bench --help); bench app loads the app it is given");
            }
        }
        $repeated = self::repeated($args, ['url', 'header', 'env']);
        $options = Options::parse($args, self::appSpec());
        if ($options->get('help')) {
            echo "Usage: bin/weft bench app APP.php [options]\n\nRuns APP.php in each mode across workers and concurrency levels chosen from this machine and from\nwhat it measures, and recommends the mode, workers and concurrency that keep p99 under --p99.\n\n"
                . Options::help(self::appSpec()) . "\n";
            return 0;
        }
        $app = $options->arguments[0] ?? throw new UsageError('bench app needs an application file: bin/weft bench app APP.php');
        if (\count($options->arguments) > 1) {
            throw new UsageError("unexpected argument '{$options->arguments[1]}'");
        }
        if (!\is_file($app)) {
            throw new UsageError("application file '$app' not found");
        }
        $settings = self::settings($options, true);
        try {
            $target = new AppTarget(
                app: (string) \realpath($app),
                paths: $repeated['url'] === [] ? ['/'] : $repeated['url'],
                method: \strtoupper($options->get('method')),
                body: self::body($options->get('body')),
                headers: self::headers($repeated['header']),
                script: self::script($options->get('script')),
                p99Ms: self::milliseconds('p99', $options->get('p99')),
                env: self::environment($repeated['env']),
            );
        } catch (\InvalidArgumentException $e) {
            throw new UsageError($e->getMessage());
        }
        if ($target->method === 'HEAD') {
            // wrk does not know an answer to HEAD has no body: it waits for the Content-Length bytes and counts nothing.
            throw new UsageError("option '--method': wrk cannot load HEAD requests (it waits for a body the answer never sends); load GET instead");
        }
        if ($settings->ab && ($target->needsScript() || $target->script !== null)) {
            // ab sends one GET of one URL: its figures would be for a different request than wrk's.
            throw new UsageError("option '--ab' loads one GET of one path; it cannot send --method, --body, --header, several --url or a --script");
        }
        $scenario = new AppScenario($settings, $target);
        $json = $options->get('json');
        // stdout carries only the JSON then: the row figures and tables go to stderr with the progress.
        [$code, $runner, $writer] = $this->runScenarios([$scenario], $settings, $options, ['bin/weft', 'bench', ...$argv], $json ? \STDERR : \STDOUT);
        $rows = Runner::thisBuild($runner->rows()[$scenario->name()] ?? []);
        $advice = $scenario->recommendation($rows);
        if ($json) {
            echo \json_encode(['recommendation' => $advice->toArray(), 'report' => $writer->outDir() . '/report.md', 'results' => $writer->outDir() . '/results.json', 'complete' => $code === 0],
                \JSON_PRETTY_PRINT | \JSON_UNESCAPED_SLASHES | \JSON_UNESCAPED_UNICODE | \JSON_PRESERVE_ZERO_FRACTION | \JSON_INVALID_UTF8_SUBSTITUTE) . "\n";
        } else {
            echo "\n" . $advice->text();
        }
        // Nothing measured (the app did not load or answer) is a failure a CI job must see.
        return $code === 0 && $advice->toArray()['rows_measured'] === 0 ? 1 : $code;
    }

    /**
     * @param list<Scenario> $scenarios
     * @param list<string> $argv
     * @param resource $results where each row's figures and the final tables go
     * @return array{0: int, 1: Runner, 2: ReportWriter}
     */
    private function runScenarios(array $scenarios, Settings $settings, Options $options, array $argv, mixed $results = \STDOUT): array
    {
        $started = \microtime(true);
        $progress = new Progress(\STDERR, $started);
        $tools = Tools::detect();
        $root = \dirname(__DIR__, 2);
        $baseline = null;
        if ($settings->baseline !== null) {
            try {
                $baseline = Baseline::prepare($root, $settings->baseline, static fn (string $line) => $progress->message($line));
            } catch (\RuntimeException $e) {
                throw new UsageError($e->getMessage());
            }
        }
        $out = $options->get('out') ?? (\getcwd() . '/var/bench/' . \date('Ymd-His'));
        if (!\is_dir($out) && !@\mkdir($out, 0o777, true)) {
            throw new UsageError("cannot create the output folder '$out'");
        }
        $out = (string) \realpath($out);
        $probeEnv = new Environment($root, $out, $settings, $tools, Machine::detect());
        $machine = $probeEnv->machine->with([
            'php_version' => \PHP_VERSION,
            'server_php' => Machine::probePhp($probeEnv->php(), $probeEnv->phpFlags()),
            'loop_backends' => ['select' => true, 'epoll' => $probeEnv->epollUnavailable() ?? true],
            'wrk_version' => Machine::wrkVersion($tools->path('wrk')),
            'java' => \Weft\Bench\Reference\Netty::javaVersion(),
        ]);
        $env = new Environment($root, $out, $settings, $tools, $machine);
        if ($env->pinned()) {
            // The runner samples /proc while the load runs: keep it off the server's CPU too.
            @\exec('taskset -p -c ' . Environment::LOAD_CPU . ' ' . \getmypid() . ' >/dev/null 2>&1');
        }
        $progress->message("weft bench: " . \implode(', ', \array_map(static fn (Scenario $s) => $s->name(), $scenarios)) . ($settings->quick ? ' (quick)' : '')
            . ($baseline !== null ? " against {$baseline->label}" : '') . " -> $out");
        $writer = new ReportWriter($env, $argv);
        $runner = new Runner($env, $scenarios, $writer, $progress, $baseline, new \Weft\Bench\Terminal($results));
        $code = $runner->run();
        $progress->message(\sprintf('weft bench: done in %s: %s/report.md, results.json and charts', \Weft\Bench\Report\Format::seconds(\microtime(true) - $started), $out));
        return [$code, $runner, $writer];
    }

    /**
     * Takes the options that may be given several times (`--url /a --url /b`) out of the arguments, in
     * order; the common parser keeps only the last value of an option.
     *
     * @param list<string> $args
     * @param list<string> $names
     * @return array<string, list<string>>
     */
    private static function repeated(array &$args, array $names): array
    {
        $found = \array_fill_keys($names, []);
        $rest = [];
        for ($i = 0; $i < \count($args); $i++) {
            $arg = $args[$i];
            if ($arg === '--') {
                \array_push($rest, ...\array_slice($args, $i));
                break;
            }
            foreach ($names as $name) {
                if ($arg === "--$name") {
                    if (!\array_key_exists($i + 1, $args)) {
                        throw new UsageError("option '--$name' needs a value");
                    }
                    $found[$name][] = $args[++$i];
                    continue 2;
                }
                if (\str_starts_with($arg, "--$name=")) {
                    $found[$name][] = \substr($arg, \strlen($name) + 3);
                    continue 2;
                }
            }
            $rest[] = $arg;
        }
        $args = $rest;
        return $found;
    }

    private static function body(?string $body): ?string
    {
        if ($body === null || !\str_starts_with($body, '@')) {
            return $body;
        }
        $file = \substr($body, 1);
        $contents = \is_file($file) ? @\file_get_contents($file) : false;
        if ($contents === false) {
            throw new UsageError("option '--body': cannot read '$file'");
        }
        return $contents;
    }

    /** @param list<string> $lines @return array<string, string> */
    private static function headers(array $lines): array
    {
        $headers = [];
        foreach ($lines as $line) {
            if (!\str_contains($line, ':')) {
                throw new UsageError("option '--header' expects 'Name: value', got '$line'");
            }
            [$name, $value] = \explode(':', $line, 2);
            $headers[\trim($name)] = \trim($value);
        }
        return $headers;
    }

    private static function script(?string $script): ?string
    {
        if ($script === null) {
            return null;
        }
        if (!\is_file($script)) {
            throw new UsageError("option '--script': '$script' not found");
        }
        return (string) \realpath($script);
    }

    /** @param list<string> $pairs @return array<string, string> */
    private static function environment(array $pairs): array
    {
        $env = [];
        foreach ($pairs as $pair) {
            if (!\preg_match('/^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s', $pair, $m)) {
                throw new UsageError("option '--env' expects NAME=value, got '$pair'");
            }
            $env[$m[1]] = $m[2];
        }
        return $env;
    }

    /** "100ms", "0.2s", "150" (milliseconds) -> milliseconds. */
    public static function milliseconds(string $option, string $value): float
    {
        if (!\preg_match('/^(\d+(?:\.\d+)?)\s*(ms|s)?$/', \trim($value), $m) || (float) $m[1] <= 0) {
            throw new UsageError("option '--$option' expects a duration like 100ms or 0.2s, got '$value'");
        }
        return (float) $m[1] * (($m[2] ?? 'ms') === 's' ? 1000 : 1);
    }

    private static function settings(Options $options, bool $app = false): Settings
    {
        $ints = static function (string $name) use ($options, $app): ?array {
            $list = $options->get($name);
            if ($list === null || ($app && $list === ['auto'])) {
                return null;
            }
            foreach ($list as $value) {
                if (!\preg_match('/^\d+$/', $value) || (int) $value < 1) {
                    throw new UsageError("option '--$name' expects positive whole numbers" . ($app ? ' or auto' : '') . ", got '$value'");
                }
            }
            return \array_map('intval', $list);
        };
        $choices = static function (string $name, array $allowed) use ($options): ?array {
            $list = $options->get($name);
            foreach ($list ?? [] as $value) {
                if (!\in_array($value, $allowed, true)) {
                    throw new UsageError("option '--$name' expects some of " . \implode(', ', $allowed) . ", got '$value'");
                }
            }
            return $list;
        };
        $instances = $ints('app-instances');
        if ($app && $instances !== null && \count($instances) > 1) {
            throw new UsageError("option '--app-instances' of bench app takes one number (the pool size of its coroutine rows), got '" . \implode(',', $instances) . "'");
        }
        $duration = $options->get('duration');
        if ($duration !== null && ($duration < 1 || $duration > 3600)) {
            throw new UsageError("option '--duration' must be between 1 and 3600 seconds");
        }
        $portRange = null;
        if (($range = $options->get('port-range')) !== null) {
            if (!\preg_match('/^(\d+)-(\d+)$/', $range, $m) || (int) $m[1] < 1024 || (int) $m[2] > 65535 || (int) $m[1] > (int) $m[2]) {
                throw new UsageError("option '--port-range' expects LOW-HIGH within 1024-65535, got '$range'");
            }
            $portRange = [(int) $m[1], (int) $m[2]];
        }
        return new Settings(
            quick: $options->get('quick'),
            duration: $duration,
            workers: $ints('workers'),
            concurrency: $ints('concurrency'),
            modes: $choices('modes', $app ? ['fpm', 'sync', 'coroutine'] : ['fpm', 'sync', 'coroutine', 'netty']),
            loops: $choices('loops', ['select', 'epoll']),
            ab: $options->get('ab'),
            varied: !$app && $options->get('varied'),
            apps: $app ? null : $choices('app', ['weft', 'curl', 'streams', 'pdo', 'usleep', 'laravel', 'symfony']),
            portRange: $portRange,
            baseline: $options->get('baseline'),
            routes: $app ? null : $choices('routes', ['hello', 'sleep', 'sql3']),
            instances: $instances,
        );
    }
}
