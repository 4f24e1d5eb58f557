<?php

declare(strict_types=1);

namespace Weft\Mode;

/** The application file is missing or does not return a handler. */
final class AppError extends \RuntimeException implements \Weft\WeftException
{
}
