// The one retired list: everything unpublished under the RCU (IMP boxes, hook originals and
// chains, cache tables, disposed classes) waits here for its grace period.
//
// Items are appended in tag order (every caller holds the runtime lock), so collection takes
// the ready prefix and stops at the first item a reader may still reach: a writer pays O(1)
// amortised per item whatever readers do, even with one parked inside a send for long.
#include "sf_private.h"
#include <stdlib.h>

struct sf_retired {
    struct sf_retired *next;
    uint64_t tag;
    sf_retire_fn free_fn;
    void *item;
};

static struct sf_retired *head;
static struct sf_retired **tail = &head;
static size_t pending;
static uint64_t visits;

void sf_retire(void *item, sf_retire_fn free_fn) {
    struct sf_retired *r = malloc(sizeof *r);
    if (!r) abort();  // nowhere to keep it, and freeing it now could pull it from under a reader
    r->next = NULL;
    r->tag = sf_rcu_retire_tag();
    r->free_fn = free_fn;
    r->item = item;
    *tail = r;
    tail = &r->next;
    pending++;
}

struct sf_retired *sf_retired_take_ready(void) {
    if (!head) return NULL;
    uint64_t oldest = sf_rcu_oldest_reader();
    struct sf_retired **cut = &head;
    size_t n = 0;
    for (; *cut && (*cut)->tag < oldest; cut = &(*cut)->next) n++;
    visits += n + 1;
    if (n == 0) return NULL;
    struct sf_retired *ready = head;
    head = *cut;
    *cut = NULL;
    if (!head) tail = &head;
    pending -= n;
    return ready;
}

void sf_retired_free(struct sf_retired *list) {
    while (list) {
        struct sf_retired *next = list->next;
        list->free_fn(list->item);
        free(list);
        list = next;
    }
}

size_t sf_retired_pending(void) { return pending; }

uint64_t sf_retired_visits(void) { return visits; }
