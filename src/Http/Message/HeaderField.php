<?php

declare(strict_types=1);

namespace Weft\Http\Message;

/**
 * The one rule for a response header field the application gives: its name a token, its value free of
 * CR, LF and the other control bytes (tab allowed). Every writer of a response head (the encoder, the
 * fpm SAPI emitter, the WebSocket 101) checks with this, and so does Response::trailerFields() for a
 * trailer field; a field that fails is the application's error: the response becomes a 500 with the
 * reason logged (or, for a trailer that came after the body, is cut), never a field silently left out.
 */
final class HeaderField
{
    /** A value, without its line end: no control byte but tab. */
    public const VALUE = '[^\x00-\x08\x0a-\x1f\x7f]*+';
    /** One field line, without its line end. */
    private const LINE = '/\A' . HeaderBlock::TOKEN . '++: ' . self::VALUE . '\z/';

    /**
     * "Name: value", checked.
     *
     * @param 'header'|'trailer' $kind what the field is, for the message
     * @throws \InvalidArgumentException naming the field, when it could break the head
     */
    public static function line(string $name, string $value, string $kind = 'header'): string
    {
        $line = $name . ': ' . $value;
        if (\preg_match(self::LINE, $line) !== 1) {
            throw new \InvalidArgumentException(self::describe($name, $kind));
        }
        return $line;
    }

    /**
     * Why the first bad field of these fails, or null when all are fine.
     *
     * @param array<string, string|list<string>> $headers as Response::headers() gives them
     */
    public static function problem(array $headers): ?string
    {
        foreach ($headers as $name => $values) {
            foreach (\is_array($values) ? $values : [$values] as $value) {
                if (\preg_match(self::LINE, $name . ': ' . $value) !== 1) {
                    return self::describe((string) $name);
                }
            }
        }
        return null;
    }

    private static function describe(string $name, string $kind = 'header'): string
    {
        return \sprintf(
            'Invalid response %s "%s": names must be tokens, values free of CR, LF and other control bytes',
            $kind,
            \addcslashes($name, "\0..\37\177..\377"),
        );
    }
}
