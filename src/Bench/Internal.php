<?php

declare(strict_types=1);

namespace Weft\Bench;

use Weft\Bench\Core\CoreMicro;
use Weft\Bench\Core\HookOverhead;
use Weft\Bench\Core\EchoBench;
use Weft\Bench\Load\HttpLoad;
use Weft\Bench\Load\LineLoad;

/**
 * The helper processes the bench runner starts itself: `bin/weft bench _NAME [options]`. Each prints
 * one JSON object on stdout (the echo server prints READY <port> and serves). Not for people; the
 * underscore keeps them out of the scenario names. The command line is parsed above (the CLI, with
 * SPEC): this layer only receives the values, so it imports nothing from Weft\Cli.
 *
 * @internal
 */
final class Internal
{
    /** The helpers' options, in the CLI's option-spec format (name => [type, default, help]). */
    public const SPEC = [
        'port' => ['int', 0, ''],
        'host' => ['string', '127.0.0.1', ''],
        'pattern' => ['string', 'many', ''],
        'clients' => ['int', 1, ''],
        'connections' => ['int', 100, ''],
        'requests' => ['int', 3, ''],
        'path' => ['string', '/', ''],
        'duration' => ['float', 2.0, ''],
        'timeout' => ['float', 10.0, ''],
        'count' => ['int', 0, ''],
        'batches' => ['int', 5, ''],
        'url' => ['string', '', ''],
    ];

    /**
     * @param array<string, mixed> $options every SPEC option, parsed
     * @param list<string> $arguments
     * @throws \InvalidArgumentException for an unknown helper or argument
     */
    public static function run(string $name, array $options, array $arguments): int
    {
        $o = static fn (string $option): mixed => $options[$option] ?? self::SPEC[$option][1];
        $result = match ($name) {
            '_core' => match ($arguments[0] ?? '') {
                'spawn' => CoreMicro::spawn($o('count') ?: 1_000_000, $o('batches')),
                'sleepers' => CoreMicro::sleepers($o('count') ?: 10_000, 1.0),
                'pingpong' => CoreMicro::pingPong($o('count') ?: 500_000),
                'hook-pdo', 'hook-redis' => HookOverhead::run(\substr($arguments[0], 5), $o('url'), $o('count') ?: 5_000, $o('batches')),
                default => throw new \InvalidArgumentException('_core needs spawn, sleepers, pingpong, hook-pdo or hook-redis'),
            },
            '_echo-server' => EchoBench::server($o('port')),
            '_echo-client' => EchoBench::client($o('port'), $o('connections'), $o('duration')),
            '_line-load' => LineLoad::run($o('host'), $o('port'), $o('pattern'), $o('clients'), $o('duration')),
            '_ws-load' => \Weft\Bench\Load\WebSocketLoad::run($o('host'), $o('port'), $o('pattern'), $o('clients'), $o('duration')),
            '_http-load' => HttpLoad::run($o('host'), $o('port'), $o('path'), $o('connections'), $o('requests'), $o('timeout')),
            '_client' => self::client($arguments[0] ?? '', $o('url'), $o('duration')),
            default => throw new \InvalidArgumentException("unknown internal bench command '$name'"),
        };
        if (\is_array($result)) {
            echo \json_encode($result, \JSON_UNESCAPED_SLASHES | \JSON_PRESERVE_ZERO_FRACTION | \JSON_INVALID_UTF8_SUBSTITUTE) . "\n";
        }
        return 0;
    }

    /** Runs another engineer's client benchmark: Weft\Bench\Client\MysqlPointSelect or RedisBench. */
    private static function client(string $which, string $url, float $seconds): array
    {
        $class = match ($which) {
            'mysql' => 'Weft\\Bench\\Client\\MysqlPointSelect',
            'redis' => 'Weft\\Bench\\Client\\RedisBench',
            default => throw new \InvalidArgumentException('_client needs mysql or redis'),
        };
        if (!\class_exists($class)) {
            throw new \InvalidArgumentException("$class is not available");
        }
        $result = $class::run($url, $seconds);
        return \is_array($result) ? $result : ['result' => $result];
    }
}
