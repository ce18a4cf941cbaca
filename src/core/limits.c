/*
 * limits.c
 *		The core's bounds: every allocation of scratch memory goes through
 *		mm_malloc and friends, which refuse to let the core's live memory
 *		exceed mm_memory_limit, and long loops poll mm_interrupt through
 *		mm_interrupted.
 *
 * Each block carries a header with its size, so the live total and its
 * high-water mark are exact.  The core is single-threaded per process (a
 * PostgreSQL backend, a test or a benchmark), so plain globals do.
 */
#include "mm_internal.h"

#include <stdlib.h>

int			(*mm_interrupt) (void) = NULL;

size_t		mm_memory_limit = 0;
size_t		mm_memory_used = 0;
size_t		mm_memory_peak = 0;
int			mm_memory_refused = 0;
unsigned int mm_alloc_failures = 0;
int			mm_fail_allocation = 0;

unsigned int mm_poll_count = 0;

/* The header in front of every block: its size, padded to keep alignment. */
typedef union MMBlockHeader
{
	size_t		size;
	long double align_ld;
	void	   *align_p;
	int64_t		align_i;
} MMBlockHeader;

/* Whether size more bytes stay within the limit (and the address space). */
static int
fits(size_t size)
{
	if (size > SIZE_MAX / 2 - sizeof(MMBlockHeader))
		return 0;
	if (mm_fail_allocation > 0 && --mm_fail_allocation == 0)
		return 0;
	if (mm_memory_limit > 0 &&
		(size > mm_memory_limit || mm_memory_used > mm_memory_limit - size))
	{
		mm_memory_refused = 1;
		return 0;
	}
	return 1;
}

static void
account(size_t plus, size_t minus)
{
	mm_memory_used += plus;
	mm_memory_used -= minus;
	if (mm_memory_used > mm_memory_peak)
		mm_memory_peak = mm_memory_used;
}

/* An allocation the core could not make: counted, NULL. */
static void *
failed(void)
{
	mm_alloc_failures++;
	return NULL;
}

void *
mm_malloc(size_t size)
{
	MMBlockHeader *h;

	if (!fits(size))
		return failed();
	h = malloc(sizeof(MMBlockHeader) + size);
	if (h == NULL)
		return failed();
	h->size = size;
	account(size, 0);
	return h + 1;
}

void *
mm_calloc(size_t n, size_t size)
{
	MMBlockHeader *h;

	if (size != 0 && n > SIZE_MAX / size)
		return failed();
	if (!fits(n * size))
		return failed();
	h = calloc(1, sizeof(MMBlockHeader) + n * size);
	if (h == NULL)
		return failed();
	h->size = n * size;
	account(n * size, 0);
	return h + 1;
}

void *
mm_malloc_array(size_t n, size_t size)
{
	if (size != 0 && n > SIZE_MAX / size)
		return failed();
	return mm_malloc(n * size);
}

void *
mm_realloc(void *p, size_t size)
{
	MMBlockHeader *h;
	size_t		old;

	if (p == NULL)
		return mm_malloc(size);
	h = (MMBlockHeader *) p - 1;
	old = h->size;
	if (size > old && !fits(size - old))
		return failed();
	h = realloc(h, sizeof(MMBlockHeader) + size);
	if (h == NULL)
		return failed();
	h->size = size;
	account(size, old);
	return h + 1;
}

void
mm_free(void *p)
{
	MMBlockHeader *h;

	if (p == NULL)
		return;
	h = (MMBlockHeader *) p - 1;
	account(0, h->size);
	free(h);
}
