<?php

declare(strict_types=1);

namespace Weft\Bench\Scenario;

use Weft\Bench\Environment;
use Weft\Bench\Load\Probe;
use Weft\Bench\Report\Chart;
use Weft\Bench\Report\Check;
use Weft\Bench\Report\Column;
use Weft\Bench\Report\Findings;
use Weft\Bench\Report\Format;
use Weft\Bench\Row;

/**
 * A framework application's hello route under Weft's bridges (kernel booted once per worker)
 * against the same application under fpm mode (booted on every request, as PHP-FPM does).
 * The apps are the bridge tests' fixtures (tests/Fixtures), installed by scripts/fixtures.sh.
 */
final class FrameworkScenario extends HttpScenario
{
    public const APPS = ['symfony' => 'symfony-app', 'laravel' => 'laravel-app'];

    public function name(): string
    {
        return 'framework';
    }

    public function title(): string
    {
        return 'framework — a Symfony and a Laravel hello route, resident against fpm';
    }

    public function description(): string
    {
        return 'The hello route ("Hello World" through the router, middleware and controller) of a Symfony 7 app (FrameworkBundle) '
            . 'and a Laravel 12 app, served through Weft\'s bridges (the kernel boots once per worker, each request is reset) and '
            . 'through fpm mode (nginx + php-fpm, opcache on, the app boots on every request). RoadRunner and Octane report '
            . '5–15x for resident over FPM. Production settings (APP_ENV=prod/production, no debug, no leak warnings).';
    }

    public function unavailable(Environment $env): ?string
    {
        $missing = parent::unavailable($env);
        if ($missing !== null) {
            return $missing;
        }
        foreach (self::APPS as $dir) {
            if (!\is_file("$env->root/var/fixtures/$dir/vendor/autoload.php") || !\is_file("$env->root/var/fixtures/$dir/weft.php")) {
                exec('bash ' . \escapeshellarg("$env->root/scripts/fixtures.sh") . ' 2>&1', $output, $status);
                if ($status !== 0) {
                    return 'the framework apps could not be installed (scripts/fixtures.sh): ' . \implode(' ', \array_slice($output, -3));
                }
                break;
            }
        }
        return null;
    }

    public function rows(Environment $env): array
    {
        $s = $this->settings;
        $modes = $s->axis(['fpm', 'sync', 'coroutine'], ['fpm', 'coroutine'], $s->modes);
        $workers = $s->axis([2], [2], $s->workers);
        $concurrency = $s->axis([32, 128], [32], $s->concurrency);
        $rows = [];
        foreach (\array_keys(self::APPS) as $app) {
            foreach ($modes as $mode) {
                foreach ($workers as $w) {
                    foreach ($concurrency as $c) {
                        $rows[] = new Row($this->name(), ['app' => $app, 'mode' => $mode, 'workers' => $w, 'concurrency' => $c]);
                    }
                }
            }
        }
        return $this->preSkipAll($rows, $env);
    }

    public function run(Row $row, Environment $env): void
    {
        $dir = self::APPS[(string) $row->param('app')];
        $arguments = ['--mode', (string) $row->param('mode'), '--workers', (string) $row->param('workers')];
        if ($row->param('mode') !== 'fpm') {
            $arguments = [...$arguments, '--loop', self::defaultLoops($env)[0]];
        }
        $server = $this->startServer(
            $row,
            $env,
            "$env->root/var/fixtures/$dir/weft.php",
            $arguments,
            ['APP_ENV' => $row->param('app') === 'symfony' ? 'prod' : 'production', 'APP_DEBUG' => '0', 'WEFT_LEAK_WARNINGS' => '0'],
        );
        if ($server === null) {
            return;
        }
        try {
            // A framework's first requests in each process compile its caches and warm opcache (every
            // php-fpm child for itself): a row measures the steady state, not that.
            for ($i = 0; $i < 4 * (int) $row->param('workers'); $i++) {
                try {
                    Probe::get('127.0.0.1', $server->port, '/', 15.0);
                } catch (\RuntimeException) {
                    break;   // loadServer()'s own check says what is wrong
                }
            }
            $this->loadServer($row, $env, $server, self::expectBody('Hello World'));
        } finally {
            $note = $server->stop();
            if ($note !== null) {
                $row->notes[] = "server $note";
            }
        }
    }

    public function columns(): array
    {
        return [
            Column::param('app', 'app'),
            Column::param('mode', 'mode'),
            Column::param('workers', 'workers'),
            Column::param('conc.', 'concurrency'),
            ...Column::http(),
            ...$this->abColumns(),
            Column::status(),
        ];
    }

    public function charts(): array
    {
        return [
            new Chart('framework-rps.svg', 'framework: requests/s against concurrency', 'concurrency', 'concurrent connections', 'rps', 'requests/s', ['app', 'mode']),
        ];
    }

    public function findings(array $rows): array
    {
        $ok = Findings::ok($rows);
        if ($ok === []) {
            return ['No row ran, so there is nothing to compare.'];
        }
        $out = [];
        foreach (self::ratios($ok) as $line) {
            $out[] = $line;
        }
        $cpu = Findings::cpuPerRequest($ok, 'mode');
        if ($cpu !== null) {
            $out[] = $cpu;
        }
        $out[] = Findings::errorsLine($rows);
        return $out;
    }

    public function checks(array $rows): array
    {
        $checks = [];
        foreach (\array_keys(self::APPS) as $app) {
            $fpm = Findings::best(Findings::ok($rows, ['app' => $app, 'mode' => 'fpm']));
            $resident = Findings::best(Findings::ok($rows, ['app' => $app, 'mode' => ['sync', 'coroutine']]));
            $claim = "$app: resident several times fpm (RoadRunner and Octane report 5–15x)";
            $checks[] = $fpm === null || $resident === null
                ? Check::unknown($claim, 'a fpm or a resident row did not run')
                : new Check($claim, $resident->number('rps') >= 3 * $fpm->number('rps'), \sprintf(
                    '%s req/s resident (%s) against %s req/s under fpm: %s',
                    Format::rate($resident->number('rps')),
                    $resident->param('mode'),
                    Format::rate($fpm->number('rps')),
                    Format::times($resident->number('rps') / \max(1e-9, $fpm->number('rps'))),
                ));
        }
        return $checks;
    }

    /** @param list<Row> $ok @return list<string> */
    private static function ratios(array $ok): array
    {
        $lines = [];
        foreach (Findings::groupBy($ok, ['app', 'concurrency']) as $group => $series) {
            $fpm = Findings::best(Findings::ok($series, ['mode' => 'fpm']));
            if ($fpm === null) {
                continue;
            }
            $parts = [];
            foreach (Findings::ok($series, ['mode' => ['sync', 'coroutine']]) as $row) {
                $parts[] = \sprintf('%s %s req/s (%s fpm)', $row->param('mode'), Format::rate($row->number('rps')), Format::times($row->number('rps') / \max(1e-9, $fpm->number('rps'))));
            }
            if ($parts !== []) {
                $lines[] = \sprintf('%s: fpm %s req/s; %s.', $group, Format::rate($fpm->number('rps')), \implode(', ', $parts));
            }
        }
        return $lines;
    }
}
