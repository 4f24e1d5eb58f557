<?php

declare(strict_types=1);

namespace Weft\Cli;

use Weft\Bench\Environment;
use Weft\Bench\Internal;
use Weft\Bench\Machine;
use Weft\Bench\Progress;
use Weft\Bench\Report\ReportWriter;
use Weft\Bench\Runner;
use Weft\Bench\Scenario;
use Weft\Bench\Scenario\CoreScenario;
use Weft\Bench\Scenario\HelloScenario;
use Weft\Bench\Scenario\LineScenario;
use Weft\Bench\Scenario\PreloadScenario;
use Weft\Bench\Scenario\SleepScenario;
use Weft\Bench\Scenario\Sql3Scenario;
use Weft\Bench\Scenario\UpstreamScenario;
use Weft\Bench\Settings;
use Weft\Bench\Tools;

/** `bin/weft bench SCENARIO|all`: runs BENCH.md's experiments on this machine and writes the report. */
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
    ];

    /** @return array<string, array{0: string, 1: mixed, 2: string, 3?: list<string>}> */
    public static function spec(): array
    {
        return [
            'quick' => ['bool', false, 'reduced matrix (all scenarios in under 3 minutes on 2 cores)'],
            'out' => ['string', null, 'output folder (default: var/bench/<timestamp>)'],
            'duration' => ['float', null, 'seconds of load per row (default: 10, quick: 2)'],
            'workers' => ['list', null, "override the matrix's worker counts"],
            'concurrency' => ['list', null, "override the matrix's concurrency levels"],
            'modes' => ['list', null, "override the matrix's modes (fpm, sync, coroutine)"],
            'loops' => ['list', null, "override the matrix's loop backends (select, epoll)"],
            'ab' => ['bool', false, 'also load every HTTP row with ab -k (apache2-utils)'],
            'varied' => ['bool', false, 'hello: add rows whose requests vary path, query and a header (wrk Lua script)'],
            'help' => ['bool', false, 'show this help'],
        ];
    }

    /** @param list<string> $args */
    public function run(array $args): int
    {
        if (isset($args[0]) && \str_starts_with($args[0], '_')) {
            // Helper processes the runner starts itself (load clients, micro benchmarks).
            return Internal::run($args);
        }
        $options = Options::parse($args, self::spec());
        if ($options->get('help')) {
            echo "Usage: bin/weft bench SCENARIO|all [options]\n\nScenarios: " . \implode(', ', \array_keys(self::SCENARIOS)) . ", all\n\n"
                . Options::help(self::spec()) . "\n";
            return 0;
        }
        $names = $options->arguments;
        if ($names === []) {
            throw new UsageError('bench needs a scenario: ' . \implode(', ', \array_keys(self::SCENARIOS)) . ' or all');
        }
        if (\in_array('all', $names, true)) {
            $names = \array_keys(self::SCENARIOS);
        }
        foreach ($names as $name) {
            if (!isset(self::SCENARIOS[$name])) {
                throw new UsageError("unknown scenario '$name' (expected: " . \implode(', ', \array_keys(self::SCENARIOS)) . ', all)');
            }
        }
        $settings = self::settings($options);
        $out = $options->get('out') ?? (\getcwd() . '/var/bench/' . \date('Ymd-His'));
        if (!\is_dir($out) && !@\mkdir($out, 0o777, true)) {
            throw new UsageError("cannot create the output folder '$out'");
        }
        $out = (string) \realpath($out);

        $tools = Tools::detect();
        $root = \dirname(__DIR__, 2);
        $probeEnv = new Environment($root, $out, $settings, $tools, Machine::detect());
        $machine = $probeEnv->machine->with([
            'php_version' => \PHP_VERSION,
            'server_php' => Machine::probePhp($probeEnv->php(), $probeEnv->phpFlags()),
            'loop_backends' => ['select' => true, 'epoll' => $probeEnv->epollUnavailable() ?? true],
            'wrk_version' => Machine::wrkVersion($tools->path('wrk')),
        ]);
        $env = new Environment($root, $out, $settings, $tools, $machine);
        if ($env->pinned()) {
            // The runner samples /proc while the load runs: keep it off the server's CPU too.
            @\exec('taskset -p -c ' . Environment::LOAD_CPU . ' ' . \getmypid() . ' >/dev/null 2>&1');
        }
        $scenarios = \array_map(static fn (string $name): Scenario => new (self::SCENARIOS[$name])($settings), \array_values(\array_unique($names)));
        $started = \microtime(true);
        $progress = new Progress(\STDERR, $started);
        $progress->message("weft bench: " . \implode(', ', \array_map(static fn (Scenario $s) => $s->name(), $scenarios)) . ($settings->quick ? ' (quick)' : '') . " -> $out");
        $runner = new Runner($env, $scenarios, new ReportWriter($env, ['bin/weft', 'bench', ...$args]), $progress);
        $code = $runner->run();
        $progress->message(\sprintf('weft bench: done in %s: %s/report.md', \Weft\Bench\Report\Format::seconds(\microtime(true) - $started), $out));
        return $code;
    }

    private static function settings(Options $options): Settings
    {
        $ints = static function (string $name) use ($options): ?array {
            $list = $options->get($name);
            if ($list === null) {
                return null;
            }
            foreach ($list as $value) {
                if (!\preg_match('/^\d+$/', $value) || (int) $value < 1) {
                    throw new UsageError("option '--$name' expects positive whole numbers, got '$value'");
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
        $duration = $options->get('duration');
        if ($duration !== null && ($duration < 1 || $duration > 3600)) {
            throw new UsageError("option '--duration' must be between 1 and 3600 seconds");
        }
        return new Settings(
            quick: $options->get('quick'),
            duration: $duration,
            workers: $ints('workers'),
            concurrency: $ints('concurrency'),
            modes: $choices('modes', ['fpm', 'sync', 'coroutine']),
            loops: $choices('loops', ['select', 'epoll']),
            ab: $options->get('ab'),
            varied: $options->get('varied'),
        );
    }
}
