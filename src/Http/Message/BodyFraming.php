<?php

declare(strict_types=1);

namespace Weft\Http\Message;

/** How the body bytes that follow a response head are delimited on the wire. */
enum BodyFraming
{
    /** No body may follow (HEAD, 1xx, 204, 304): do not call the producer. */
    case None;
    /** The head carries Content-Length: write exactly that many raw bytes. */
    case ContentLength;
    /** Wrap every write in ResponseEncoder::encodeChunk(), end with lastChunk(). */
    case Chunked;
    /** HTTP/1.0 stream of unknown length: raw bytes, then close the connection. */
    case CloseDelimited;
}
