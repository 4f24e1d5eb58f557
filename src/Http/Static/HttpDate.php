<?php

declare(strict_types=1);

namespace Weft\Http\Static;

/**
 * Parses an HTTP-date (RFC 9110 section 5.6.7): IMF-fixdate, and the obsolete RFC 850 and asctime
 * forms a recipient must still accept. Anything else is null, so the header that carried it is
 * ignored, as the RFC asks (strtotime() would take "tomorrow" or "now").
 */
final class HttpDate
{
    private const FORMATS = ['D, d M Y H:i:s \G\M\T', 'l, d-M-y H:i:s \G\M\T', 'D M j H:i:s Y'];

    public static function parse(string $value): ?int
    {
        $value = \trim((string) \preg_replace('/\s+/', ' ', $value));
        $utc = new \DateTimeZone('UTC');
        foreach (self::FORMATS as $format) {
            $date = \DateTimeImmutable::createFromFormat('!' . $format, $value, $utc);
            if ($date !== false) {
                $errors = \DateTimeImmutable::getLastErrors();
                if ($errors === false || ($errors['warning_count'] === 0 && $errors['error_count'] === 0)) {
                    return $date->getTimestamp();
                }
            }
        }
        return null;
    }
}
