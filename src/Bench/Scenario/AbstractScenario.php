<?php

declare(strict_types=1);

namespace Weft\Bench\Scenario;

use Weft\Bench\Environment;
use Weft\Bench\Row;
use Weft\Bench\Scenario;
use Weft\Bench\Settings;
use Weft\Bench\Tools;

/** Defaults shared by the scenarios: no charts, notes or clean-up unless a scenario has some. */
abstract class AbstractScenario implements Scenario
{
    /** Cores the servers run on (1 when pinned): what 100 % CPU means for a row. */
    protected int $serverCores = 1;

    public function __construct(protected readonly Settings $settings)
    {
    }

    public function charts(): array
    {
        return [];
    }

    public function notes(Environment $env): array
    {
        return [];
    }

    public function finish(Environment $env): void
    {
    }

    public function unavailable(Environment $env): ?string
    {
        return null;
    }

    public function comparesBuilds(): bool
    {
        return false;
    }

    public function estimate(Row $row): float
    {
        return $row->status === Row::PENDING ? $this->settings->duration() + 1.0 : 0.0;
    }

    /** The reason a row cannot run here that is known before running it, or null. */
    protected function preSkip(Row $row, Environment $env): ?string
    {
        if ($row->param('loop') === 'epoll' && ($why = $env->epollUnavailable()) !== null) {
            return $why;
        }
        if ($row->param('mode') === 'fpm') {
            foreach (['nginx', 'php-fpm'] as $tool) {
                if (!$env->tools->has($tool)) {
                    return Tools::missing($tool);
                }
            }
        }
        $workers = (int) ($row->param('workers') ?? 1);
        // ~40 MB a PHP worker at most (most of it shared after fork); fpm adds nginx.
        return $env->memoryRefuses($workers + 1, 40 << 20);
    }

    /** @param list<Row> $rows @return list<Row> */
    protected function preSkipAll(array $rows, Environment $env): array
    {
        $this->serverCores = $env->serverCores();
        foreach ($rows as $row) {
            $reason = $this->preSkip($row, $env);
            if ($reason !== null) {
                $row->skip($reason);
            }
        }
        return $rows;
    }

    /** The loop a scenario without a loop axis uses: epoll when it can run here, else select. */
    protected static function defaultLoops(Environment $env): array
    {
        return $env->epollUnavailable() === null ? ['epoll'] : ['select'];
    }

    /** An example app of the build under test (a baseline build runs its own examples, written for its API). */
    protected static function exampleFile(Environment $env, string $name): string
    {
        return $env->serverRoot() . '/examples/' . $name;
    }

    /** @param list<string> $files @return ?string a reason when one of the example apps is missing */
    protected static function missingFiles(Environment $env, array $files): ?string
    {
        foreach ($files as $file) {
            if (!\is_file(self::exampleFile($env, $file))) {
                return "examples/$file not found";
            }
        }
        return null;
    }
}
