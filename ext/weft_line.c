/*
 * The line protocol's framing in C, for Weft\Ext\Conn::frameLines() (issue 23: the line-echo target).
 *
 * A read that is a whole number of lines, each within the limit, is handed to PHP already cut: the
 * callback's second argument is the list of [line, ending] pairs that Weft\Socket\LineSplitter::split()
 * gives for the same bytes (a line ends with "\n"; a "\r" before it belongs to the ending, "\r\n"). Any
 * other read (a line still arriving, one over the limit, more than WEFT_LINE_MAX_BATCH lines) is handed
 * over as bytes alone, and PHP's splitter takes it: so a line too long, its error and the bytes before
 * it are PHP's, word for word, and C never decides anything PHP would decide otherwise.
 *
 * Nothing is kept between reads and nothing is read past the string given: pure, bytes in, zvals out.
 */

#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php.h"
#include "php_weft.h"

#include <string.h>

/* Past this many lines in one read, PHP splits it (one array of pairs per line is the cost either way). */
#define WEFT_LINE_MAX_BATCH 1024

static zend_string *weft_line_crlf;

void weft_line_minit(void)
{
	weft_line_crlf = zend_string_init_interned("\r\n", 2, 1);
}

bool weft_line_frame(zend_string *bytes, zend_long max_length, zval *lines)
{
	const char *start = ZSTR_VAL(bytes);
	size_t size = ZSTR_LEN(bytes);
	if (max_length < 1 || size == 0 || start[size - 1] != '\n') {
		return false;
	}
	/* First pass: every line within the limit, and how many; nothing allocated until the read qualifies. */
	uint32_t count = 0;
	const char *p = start, *end = start + size;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t) (end - p));
		/* nl is never NULL here: the read ends with "\n" */
		size_t length = (size_t) (nl - p);
		if (length > 0 && nl[-1] == '\r') {
			length--;
		}
		if ((zend_ulong) length > (zend_ulong) max_length || ++count > WEFT_LINE_MAX_BATCH) {
			return false;
		}
		p = nl + 1;
	}
	array_init_size(lines, count);
	zend_hash_real_init_packed(Z_ARRVAL_P(lines));
	p = start;
	ZEND_HASH_FILL_PACKED(Z_ARRVAL_P(lines)) {
		while (p < end) {
			const char *nl = memchr(p, '\n', (size_t) (end - p));
			size_t length = (size_t) (nl - p);
			bool crlf = length > 0 && nl[-1] == '\r';
			if (crlf) {
				length--;
			}
			zval line, ending, pair;
			ZVAL_STRINGL_FAST(&line, p, length);
			ZVAL_INTERNED_STR(&ending, crlf ? weft_line_crlf : ZSTR_CHAR('\n'));
			ZVAL_ARR(&pair, zend_new_pair(&line, &ending));
			ZEND_HASH_FILL_ADD(&pair);
			p = nl + 1;
		}
	} ZEND_HASH_FILL_END();
	return true;
}
