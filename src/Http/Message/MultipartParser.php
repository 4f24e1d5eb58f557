<?php

declare(strict_types=1);

namespace Weft\Http\Message;

/**
 * multipart/form-data (RFC 7578) into the same shapes PHP gives $_POST and PSR-7 uploaded files.
 *
 * Field names go through parse_str, so "a[]" and "a[b]" nest exactly as they would in a
 * urlencoded body or in $_POST; files are nested by the same rules.
 *
 * @internal used by Request
 */
final class MultipartParser
{
    /**
     * @return array{0: array<array-key, mixed>, 1: array<array-key, mixed>} fields, files
     *         (files nested like PSR-7 getUploadedFiles(), leaves are UploadedFile)
     * @throws BadRequest
     */
    public static function parse(string $body, string $contentType): array
    {
        if (preg_match('/;\s*boundary\s*=\s*(?:"([^"]{1,200})"|([^;\s]{1,200}))/i', $contentType, $m) !== 1) {
            throw BadRequest::malformedMultipart('no boundary in Content-Type');
        }
        $delimiter = '--' . ($m[1] !== '' ? $m[1] : $m[2]);
        $separator = "\r\n" . $delimiter;

        // The first delimiter may follow a preamble, which is ignored.
        if (str_starts_with($body, $delimiter)) {
            $pos = \strlen($delimiter);
        } else {
            $first = strpos($body, $separator);
            if ($first === false) {
                throw BadRequest::malformedMultipart('no opening boundary');
            }
            $pos = $first + \strlen($separator);
        }

        $fieldQuery = '';
        $fileQuery = '';
        $files = [];
        while (true) {
            if (substr($body, $pos, 2) === '--') {
                break; // close delimiter; anything after it is epilogue
            }
            // Transport padding (whitespace) may follow a delimiter before its CRLF.
            $pos += strspn($body, " \t", $pos);
            if (substr($body, $pos, 2) !== "\r\n") {
                throw BadRequest::malformedMultipart('boundary not followed by CRLF');
            }
            $pos += 2;
            $headEnd = substr($body, $pos, 2) === "\r\n" ? $pos : strpos($body, "\r\n\r\n", $pos);
            if ($headEnd === false) {
                throw BadRequest::malformedMultipart('unterminated part headers');
            }
            $headers = $headEnd === $pos ? [] : HeaderBlock::parse("\r\n" . substr($body, $pos, $headEnd - $pos));
            $contentStart = $headEnd === $pos ? $pos + 2 : $headEnd + 4;
            $next = strpos($body, $separator, $contentStart);
            if ($next === false) {
                throw BadRequest::malformedMultipart('missing closing boundary');
            }
            $content = substr($body, $contentStart, $next - $contentStart);
            $pos = $next + \strlen($separator);

            $params = self::dispositionParams($headers['content-disposition'][0] ?? '');
            $name = $params['name'] ?? '';
            if ($name === '') {
                continue; // a part without a name has no place in the form
            }
            if (!isset($params['filename'])) {
                $fieldQuery .= '&' . rawurlencode($name) . '=' . rawurlencode($content);
                continue;
            }
            $fileQuery .= '&' . rawurlencode($name) . '=' . \count($files);
            $files[] = new UploadedFile(
                self::clientFilename($params['filename']),
                $headers['content-type'][0] ?? 'application/octet-stream',
                $content,
            );
        }

        $fields = [];
        if ($fieldQuery !== '') {
            parse_str(substr($fieldQuery, 1), $fields);
        }
        $tree = [];
        if ($fileQuery !== '') {
            parse_str(substr($fileQuery, 1), $tree);
            array_walk_recursive($tree, static function (mixed &$leaf) use ($files): void {
                $leaf = $files[(int) $leaf];
            });
        }
        return [$fields, $tree];
    }

    /** @return array<string, string> lowercase parameter names of a Content-Disposition value */
    private static function dispositionParams(string $disposition): array
    {
        $semicolon = strpos($disposition, ';');
        if ($semicolon === false) {
            return [];
        }
        // Walk the parameters in order so that a quoted value containing "; name=" cannot be
        // mistaken for a parameter of its own.
        preg_match_all(
            '/\G\s*;\s*([^=;\s]+)\s*=\s*(?:"((?:[^"\\\\]|\\\\.)*)"|([^;\s]*))\s*/',
            $disposition,
            $matches,
            PREG_SET_ORDER,
            $semicolon,
        );
        $params = [];
        foreach ($matches as $m) {
            $value = isset($m[3]) ? $m[3] : preg_replace('/\\\\(.)/s', '$1', $m[2]);
            $params[strtolower($m[1])] ??= $value;
        }
        return $params;
    }

    /** Some browsers send a full (Windows) path; only its last segment is the file's name. */
    private static function clientFilename(string $filename): string
    {
        $filename = str_replace('\\', '/', $filename);
        $slash = strrpos($filename, '/');
        return $slash === false ? $filename : substr($filename, $slash + 1);
    }
}
