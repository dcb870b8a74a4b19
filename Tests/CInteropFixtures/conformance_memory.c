// Heap per added method, measured as objc4's test/addMethods-style
// scenario does: many classes, many methods each, the heap compared before and after.
#include "CInteropFixtures.h"

#include <stdio.h>

#include "conformance_check.h"

static long plain(sf_id self, sf_sel cmd) { (void)self; (void)cmd; return 7; }

double cf_heap_per_added_method(const char *name, int classes, int methods, bool send_each) {
    sf_class_t made[classes];
    sf_sel sels[methods];
    char buf[256];
    for (int m = 0; m < methods; m++) {
        snprintf(buf, sizeof buf, "cfMemoryMethod%d", m);
        sels[m] = SEL(buf);  // selectors are interned before the measurement: shared by all classes
    }
    for (int c = 0; c < classes; c++) {
        snprintf(buf, sizeof buf, "%s.%d", name, c);
        made[c] = sf_allocateClassPair(NULL, buf);
        if (!made[c]) return -1;
        sf_registerClassPair(made[c]);
    }
    size_t before = cf_heap_in_use();
    for (int c = 0; c < classes; c++)
        for (int m = 0; m < methods; m++)
            if (sf_class_addMethod(made[c], sels[m], IMP(plain), "q@:") != SF_OK) return -1;
    if (send_each) {
        for (int c = 0; c < classes; c++) {
            sf_id obj = sf_class_createInstance(made[c]);
            for (int m = 0; m < methods; m++) ((long (*)(sf_id, sf_sel))sf_msg_lookup(obj, sels[m]))(obj, sels[m]);
            sf_release(obj);
        }
    }
    size_t after = cf_heap_in_use();
    for (int c = 0; c < classes; c++)
        if (sf_disposeClassPair(made[c]) != SF_OK) return -1;
    return (double)(after - before) / (classes * methods);
}
