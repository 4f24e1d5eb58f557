<?php

declare(strict_types=1);

namespace Weft\Server;

/**
 * One message from a worker to its master: the small, closed set of kinds the master acts on, each
 * with its fields, checked on receipt by decode().
 *
 * - ready: the application is loaded and the worker accepts; its figures.
 * - stats: its figures, every second (requests, connections, memory, running requests, loop lag, ...).
 * - draining: it has stopped accepting (stop, reload, --max-requests, the master gone); its figures.
 * - boot-failed: it could not load the application; why. It exits right after.
 *
 * On the wire: one JSON object per line, {"type": KIND, "stats": {...}} or {"type": "boot-failed",
 * "error": "..."}. JSON never holds a raw line break, so the one LineSplitter frames it.
 *
 * @internal
 */
final class WorkerMessage
{
    public const READY = 'ready';
    public const STATS = 'stats';
    public const DRAINING = 'draining';
    public const BOOT_FAILED = 'boot-failed';

    /** Figures the master itself reads, with their types; the rest of a report is passed on as it is. */
    private const REQUIRED_STATS = ['pid' => 'integer', 'requests' => 'integer', 'connections' => 'integer'];
    private const MAX_DEPTH = 16;

    /** @param array<string, mixed> $stats */
    private function __construct(public readonly string $type, public readonly array $stats = [], public readonly ?string $error = null)
    {
    }

    /** @param array<string, mixed> $stats */
    public static function ready(array $stats): self
    {
        return new self(self::READY, $stats);
    }

    /** @param array<string, mixed> $stats */
    public static function stats(array $stats): self
    {
        return new self(self::STATS, $stats);
    }

    /** @param array<string, mixed> $stats */
    public static function draining(array $stats): self
    {
        return new self(self::DRAINING, $stats);
    }

    public static function bootFailed(string $error): self
    {
        return new self(self::BOOT_FAILED, [], $error);
    }

    /** Only the periodic report may be dropped when the master falls behind: the next one replaces it. */
    public function isSuperseded(): bool
    {
        return $this->type === self::STATS;
    }

    /** The frame, without its line ending. */
    public function encode(): string
    {
        $fields = $this->type === self::BOOT_FAILED ? ['error' => $this->error] : ['stats' => (object) $this->stats];
        return \json_encode(['type' => $this->type] + $fields, \JSON_THROW_ON_ERROR | \JSON_INVALID_UTF8_SUBSTITUTE | \JSON_UNESCAPED_SLASHES);
    }

    /** @throws MalformedMessage */
    public static function decode(string $frame): self
    {
        try {
            $message = \json_decode($frame, true, self::MAX_DEPTH, \JSON_THROW_ON_ERROR);
        } catch (\JsonException $e) {
            throw MalformedMessage::because('not JSON (' . $e->getMessage() . ')', $frame);
        }
        if (!\is_array($message) || !\is_string($message['type'] ?? null)) {
            throw MalformedMessage::because('not an object with a "type"', $frame);
        }
        $type = $message['type'];
        if ($type === self::BOOT_FAILED) {
            if (\array_keys($message) !== ['type', 'error'] || !\is_string($message['error'])) {
                throw MalformedMessage::because('a boot-failed message holds exactly a string "error"', $frame);
            }
            return self::bootFailed($message['error']);
        }
        if (!\in_array($type, [self::READY, self::STATS, self::DRAINING], true)) {
            throw MalformedMessage::because("unknown message type '" . \substr($type, 0, 40) . "'", $frame);
        }
        $stats = $message['stats'] ?? null;
        if (\array_keys($message) !== ['type', 'stats'] || !\is_array($stats) || \array_is_list($stats) && $stats !== []) {
            throw MalformedMessage::because("a $type message holds exactly an object \"stats\"", $frame);
        }
        foreach (self::REQUIRED_STATS as $field => $expected) {
            if (\gettype($stats[$field] ?? null) !== $expected) {
                throw MalformedMessage::because("the \"$field\" of a $type message must be an $expected", $frame);
            }
        }
        if (isset($stats['running']) && (!\is_array($stats['running']) || !\array_is_list($stats['running']))) {
            throw MalformedMessage::because("the \"running\" of a $type message must be a list", $frame);
        }
        return new self($type, $stats);
    }
}
