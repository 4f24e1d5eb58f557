<?php

declare(strict_types=1);

namespace Weft\Bridge\HttpFoundation;

use Symfony\Component\HttpFoundation\File\UploadedFile as SymfonyUploadedFile;
use Symfony\Component\HttpFoundation\Request as SymfonyRequest;
use Weft\Coroutine\ProcessState;

/**
 * The PHP state that PHP-FPM starts afresh for every request and a resident worker keeps: the
 * superglobals, the default timezone, the C locale and intl's default locale.
 *
 * $_GET, $_POST, $_COOKIE, $_FILES, $_REQUEST and $_SERVER hold the request during it, as PHP-FPM
 * fills them: code that reads them instead of the request object (older libraries, a
 * `$_SERVER['REQUEST_URI']` in a template) sees the request it serves. What a request writes into
 * them (`$_GET['page'] = ...`, Request::overrideGlobals()), and a timezone or locale it sets for
 * itself (date_default_timezone_set() for a user's timezone, setlocale()), is gone before the next
 * request: each request starts from the worker's own values, and they are put back once it is over.
 *
 * @internal shared by the Symfony and Laravel bridges
 */
final class PhpGlobals
{
    /** @var array{0: array<array-key, mixed>, 1: array<array-key, mixed>, 2: array<array-key, mixed>, 3: array<array-key, mixed>, 4: array<array-key, mixed>, 5: array<array-key, mixed>} */
    private readonly array $worker;

    private readonly string $timezone;
    private readonly string|false $locale;
    private readonly ?string $intlLocale;

    /** Which request the superglobals hold now: a request that ends after the next one began leaves them alone. */
    private int $current = 0;

    public function __construct()
    {
        $this->worker = [$_GET, $_POST, $_COOKIE, $_FILES, $_REQUEST, $_SERVER];
        $this->timezone = date_default_timezone_get();
        $this->locale = setlocale(\LC_ALL, '0');
        $this->intlLocale = class_exists(\Locale::class, false) ? \Locale::getDefault() : null;
    }

    /**
     * Makes all of it follow the coroutine, for a worker that serves several requests at once
     * (InstancePool): each request sees its own superglobals, timezone and locales across its waits.
     */
    public static function follow(): void
    {
        foreach (['_GET', '_POST', '_COOKIE', '_FILES', '_REQUEST', '_SERVER'] as $name) {
            ProcessState::follow(
                "\$$name",
                static fn (): array => $GLOBALS[$name],
                static function (mixed $value) use ($name): void {
                    $GLOBALS[$name] = $value;
                },
            );
        }
        // The same six, read and written at once by name at every switch between two requests: a
        // closure call and a $GLOBALS lookup per value cost a Laravel switch a fifth of its instructions.
        ProcessState::followTogether(
            ['$_GET', '$_POST', '$_COOKIE', '$_FILES', '$_REQUEST', '$_SERVER'],
            static function (array &$values): void {
                $values['$_GET'] = $_GET;
                $values['$_POST'] = $_POST;
                $values['$_COOKIE'] = $_COOKIE;
                $values['$_FILES'] = $_FILES;
                $values['$_REQUEST'] = $_REQUEST;
                $values['$_SERVER'] = $_SERVER;
            },
            static function (array $values): void {
                // Followed together, so a set has all six or none.
                if (\array_key_exists('$_SERVER', $values)) {
                    $_GET = $values['$_GET'];
                    $_POST = $values['$_POST'];
                    $_COOKIE = $values['$_COOKIE'];
                    $_FILES = $values['$_FILES'];
                    $_REQUEST = $values['$_REQUEST'];
                    $_SERVER = $values['$_SERVER'];
                }
            },
        );
        ProcessState::follow('date_default_timezone', static fn (): string => date_default_timezone_get(), static function (mixed $v): void {
            if (date_default_timezone_get() !== $v) {
                date_default_timezone_set($v);
            }
        });
        ProcessState::follow('setlocale', static fn (): string|false => setlocale(\LC_ALL, '0'), static function (mixed $v): void {
            if ($v !== false && setlocale(\LC_ALL, '0') !== $v) {
                setlocale(\LC_ALL, $v);
            }
        });
        if (class_exists(\Locale::class)) {
            ProcessState::follow('Locale::default', static fn (): string => \Locale::getDefault(), static function (mixed $v): void {
                if (\Locale::getDefault() !== $v) {
                    \Locale::setDefault($v);
                }
            });
        }
    }

    /** @return int the token to give back to leave() */
    public function enter(SymfonyRequest $request): int
    {
        $_GET = $request->query->all();
        // PHP fills $_POST and $_FILES for POST only (the request object has a PUT's form too).
        $post = $request->getRealMethod() === 'POST';
        $_POST = $post ? $request->request->all() : [];
        $_COOKIE = $request->cookies->all();
        $_FILES = $post ? self::files($request->files->all()) : [];
        // request_order "GP", PHP's default: $_POST wins over $_GET, cookies are not in it.
        $_REQUEST = array_replace($_GET, $_POST);
        $server = $request->server->all() + $this->worker[5];
        // What the CLI gave the worker, and that no web request has.
        unset($server['argv'], $server['argc']);
        $_SERVER = $server;
        $this->restoreProcessState();
        return ++$this->current;
    }

    public function leave(int $token): void
    {
        if ($token === $this->current) {
            [$_GET, $_POST, $_COOKIE, $_FILES, $_REQUEST, $_SERVER] = $this->worker;
            $this->restoreProcessState();
        }
    }

    private function restoreProcessState(): void
    {
        if (date_default_timezone_get() !== $this->timezone) {
            date_default_timezone_set($this->timezone);
        }
        // setlocale(LC_ALL, '0') only reads; its answer (one name, or every category's) sets them all back.
        if ($this->locale !== false && setlocale(\LC_ALL, '0') !== $this->locale) {
            setlocale(\LC_ALL, $this->locale);
        }
        // intl's default locale (Symfony's Request::setLocale() sets it too).
        if ($this->intlLocale !== null && \Locale::getDefault() !== $this->intlLocale) {
            \Locale::setDefault($this->intlLocale);
        }
    }

    /**
     * PHP's $_FILES shape for each top-level field: name/type/tmp_name/error/size, each nested like
     * the field's own structure.
     *
     * @param array<array-key, mixed> $files
     * @return array<array-key, mixed>
     */
    private static function files(array $files): array
    {
        $result = [];
        foreach ($files as $field => $value) {
            $entry = [];
            foreach (['name', 'type', 'tmp_name', 'error', 'size'] as $key) {
                $entry[$key] = self::fileKey($value, $key);
            }
            $result[$field] = $entry;
        }
        return $result;
    }

    private static function fileKey(mixed $value, string $key): mixed
    {
        if (\is_array($value)) {
            return array_map(static fn (mixed $item): mixed => self::fileKey($item, $key), $value);
        }
        if (!$value instanceof SymfonyUploadedFile) {
            // An empty file input: PHP reports it as UPLOAD_ERR_NO_FILE.
            return match ($key) {
                'error' => UPLOAD_ERR_NO_FILE,
                'size' => 0,
                default => '',
            };
        }
        return match ($key) {
            'name' => $value->getClientOriginalName(),
            'type' => $value->getClientMimeType(),
            'tmp_name' => $value->getPathname(),
            'error' => $value->getError(),
            'size' => (int) $value->getSize(),
        };
    }
}
