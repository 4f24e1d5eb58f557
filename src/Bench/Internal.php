<?php

declare(strict_types=1);

namespace Weft\Bench;

use Weft\Bench\Core\CoreMicro;
use Weft\Bench\Core\EchoBench;
use Weft\Bench\Load\HttpLoad;
use Weft\Bench\Load\LineLoad;
use Weft\Cli\Options;
use Weft\Cli\UsageError;

/**
 * The helper processes the bench runner starts itself: `bin/weft bench _NAME [options]`. Each prints
 * one JSON object on stdout (the echo server prints READY <port> and serves). Not for people; the
 * underscore keeps them out of the scenario names.
 *
 * @internal
 */
final class Internal
{
    /** @param list<string> $args */
    public static function run(array $args): int
    {
        $name = \array_shift($args);
        $spec = [
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
        $o = Options::parse($args, $spec);
        $result = match ($name) {
            '_core' => match ($o->arguments[0] ?? '') {
                'spawn' => CoreMicro::spawn($o->get('count') ?: 1_000_000, $o->get('batches')),
                'sleepers' => CoreMicro::sleepers($o->get('count') ?: 10_000, 1.0),
                'pingpong' => CoreMicro::pingPong($o->get('count') ?: 500_000),
                default => throw new UsageError('_core needs spawn, sleepers or pingpong'),
            },
            '_echo-server' => EchoBench::server(),
            '_echo-client' => EchoBench::client($o->get('port'), $o->get('connections'), $o->get('duration')),
            '_line-load' => LineLoad::run($o->get('host'), $o->get('port'), $o->get('pattern'), $o->get('clients'), $o->get('duration')),
            '_ws-load' => \Weft\Bench\Load\WebSocketLoad::run($o->get('host'), $o->get('port'), $o->get('pattern'), $o->get('clients'), $o->get('duration')),
            '_http-load' => HttpLoad::run($o->get('host'), $o->get('port'), $o->get('path'), $o->get('connections'), $o->get('requests'), $o->get('timeout')),
            '_client' => self::client($o->arguments[0] ?? '', $o->get('url'), $o->get('duration')),
            default => throw new UsageError("unknown internal bench command '$name'"),
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
            default => throw new UsageError('_client needs mysql or redis'),
        };
        if (!\class_exists($class)) {
            throw new UsageError("$class is not available");
        }
        $result = $class::run($url, $seconds);
        return \is_array($result) ? $result : ['result' => $result];
    }
}
