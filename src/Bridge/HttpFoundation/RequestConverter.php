<?php

declare(strict_types=1);

namespace Weft\Bridge\HttpFoundation;

use Symfony\Component\HttpFoundation\File\UploadedFile as SymfonyUploadedFile;
use Symfony\Component\HttpFoundation\Request as SymfonyRequest;
use Weft\Http\Message\BadRequest;
use Weft\Http\Message\Request;
use Weft\Http\Message\ServerVariables;
use Weft\Http\Message\UploadedFile;

/**
 * Builds a Symfony HttpFoundation request (or a subclass such as Illuminate\Http\Request) from a
 * Weft request, with what PHP-FPM would have put in the superglobals.
 *
 * The body is handed over as the same PHP string the parser produced (strings are shared until
 * written), so it is never copied. Uploaded files are written to temporary files, as PHP's SAPI
 * does, because HttpFoundation's UploadedFile is a path; the bridge removes them after the request.
 *
 * @internal shared by the Symfony and Laravel bridges
 */
final class RequestConverter
{
    /** @var list<string> temporary files of the request being served */
    private array $temporary = [];

    /**
     * @param array<string, mixed> $server base $_SERVER values (environment, SCRIPT_FILENAME, ...);
     *        per-request values win
     */
    public function __construct(private readonly array $server = [])
    {
    }

    /**
     * @template T of SymfonyRequest
     * @param class-string<T> $class
     * @param class-string<SymfonyUploadedFile> $fileClass Illuminate\Http\UploadedFile for Laravel,
     *        which keeps instances of its own class as they are (and so their "test" flag)
     * @return T
     */
    public function convert(Request $request, string $class = SymfonyRequest::class, string $fileClass = SymfonyUploadedFile::class): SymfonyRequest
    {
        $form = [];
        $files = [];
        $type = $request->contentType();
        if ($type === 'application/x-www-form-urlencoded' || $type === 'multipart/form-data') {
            try {
                $form = $request->form();
                $files = $this->files($request->files(), $fileClass);
            } catch (BadRequest) {
                // A body PHP could not parse either: PHP leaves $_POST and $_FILES empty and the
                // raw body readable, so the application decides what the error looks like.
                $form = [];
                $files = [];
            }
        }
        return new $class($request->query(), $form, [], $request->cookies(), $files, $this->serverParams($request), $request->body());
    }

    /**
     * The temporary files of the request just converted, handed to the caller, which removes them
     * (remove()) once that request is over: two requests' files never mix, even in sync mode where
     * a streamed body may still be written while the next request is converted.
     *
     * @return list<string>
     */
    public function takeTemporaryFiles(): array
    {
        $files = $this->temporary;
        $this->temporary = [];
        return $files;
    }

    /** @param list<string> $paths */
    public static function remove(array $paths): void
    {
        foreach ($paths as $path) {
            if (is_file($path)) {
                @unlink($path);
            }
        }
    }

    /** @return array<string, mixed> */
    private function serverParams(Request $request): array
    {
        $headers = $request->headers();
        if ($request->viaTrustedProxy()) {
            // Weft used them: left in, a framework told to trust every peer ("*", REMOTE_ADDR) would now
            // trust the client named in REMOTE_ADDR and read the client's own forged entries.
            unset($headers['x-forwarded-for'], $headers['x-forwarded-proto'], $headers['forwarded']);
        }
        $server = ServerVariables::of($request, $headers, microtime(true)) + ['REMOTE_ADDR' => '127.0.0.1'] + $this->server;
        if (isset($server['HTTP_HOST'])) {
            $colon = strrpos($server['HTTP_HOST'], ':');
            $bracket = strrpos($server['HTTP_HOST'], ']');
            if ($colon !== false && ($bracket === false || $colon > $bracket)) {
                $server['SERVER_NAME'] = substr($server['HTTP_HOST'], 0, $colon);
                $server['SERVER_PORT'] = substr($server['HTTP_HOST'], $colon + 1);
            } else {
                $server['SERVER_NAME'] = $server['HTTP_HOST'];
            }
        }
        return $server;
    }

    /**
     * @param array<array-key, mixed> $files
     * @param class-string<SymfonyUploadedFile> $fileClass
     * @return array<array-key, mixed>
     */
    private function files(array $files, string $fileClass): array
    {
        $result = [];
        foreach ($files as $key => $file) {
            if (!$file instanceof UploadedFile) {
                $result[$key] = $this->files($file, $fileClass);
            } elseif ($file->isEmpty()) {
                $result[$key] = null;   // an empty file input, as FileBag turns UPLOAD_ERR_NO_FILE into null
            } else {
                $path = tempnam(sys_get_temp_dir(), 'weft-upload-');
                if ($path === false || file_put_contents($path, $file->contents) !== \strlen($file->contents)) {
                    throw new \RuntimeException('Could not write an uploaded file to ' . sys_get_temp_dir());
                }
                $this->temporary[] = $path;
                // "test" mode: the file did not come through PHP's own upload handling, so
                // is_uploaded_file() knows nothing of it; Symfony then trusts the path as it is.
                $result[$key] = new $fileClass($path, $file->clientFilename, $file->clientMediaType ?: null, UPLOAD_ERR_OK, true);
            }
        }
        return $result;
    }
}
