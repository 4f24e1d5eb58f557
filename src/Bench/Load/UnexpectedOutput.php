<?php

declare(strict_types=1);

namespace Weft\Bench\Load;

/** A load tool printed something that is not a finished run (it failed, or its format is unknown). */
final class UnexpectedOutput extends \RuntimeException implements \Weft\WeftException
{
    public static function from(string $tool, string $output): self
    {
        $text = \trim($output);
        $lines = \array_slice(\explode("\n", $text), -3);
        return new self($text === '' ? "$tool printed nothing" : "$tool: " . \implode(' / ', \array_map('trim', $lines)));
    }
}
