import CInteropFixtures
import CDynamicRuntime
import Synchronization
import XCTest
@testable import DynamicRuntime

private let counter = Atomic<Int>(0)
private func conformanceName(_ base: String = #function) -> String {
    "CF\(base.filter { $0.isLetter })_\(counter.add(1, ordering: .relaxed).newValue)"
}

/// Scenarios of libobjc2's and objc4's runtime tests, written in C against the public header
/// (Tests/CInteropFixtures/conformance*.c). Each returns 0 or the line of its failed check.
final class ConformanceCTests: XCTestCase {
    private func run(_ scenario: (UnsafePointer<CChar>) -> Int32, file: StaticString = #filePath, line: UInt = #line) {
        let objects = Runtime.liveObjectCount
        let result = conformanceName().withCString { scenario($0) }
        XCTAssertEqual(result, 0, String(cString: cf_failure()), file: file, line: line)
        XCTAssertEqual(Runtime.liveObjectCount, objects, "the scenario released everything it made", file: file, line: line)
    }

    /// `log2_alignment` is honoured: a 32-byte-aligned ivar after two objects sits at a multiple
    /// of 32, and an instance's address is aligned as its strictest ivar asks, not only to 16.
    func testIvarAlignmentIsHonoured() { run(cf_scenario_ivar_alignment) }

    /// A declined selector is cached until the class's methods change;
    /// respondsToSelector and getMethodImplementation ask the resolver.
    func testResolverIsCachedAndConsultedByIntrospection() { run(cf_scenario_resolver_caching) }

    /// A missing selector's IMP is sf_msgForward, which forwards any learnable call.
    func testForwardingIMP() { run(cf_scenario_forwarding_imp) }

    /// objc4's bound: under 120 bytes of heap per added method, 100 classes × 200 methods
    /// (docs/performance.md).
    func testHeapPerAddedMethodIsUnder120Bytes() {
        let perMethod = conformanceName().withCString { cf_heap_per_added_method($0, 100, 200, false) }
        print("heap per added method: \(perMethod) B")
        XCTAssertGreaterThan(perMethod, 0)
        XCTAssertLessThan(perMethod, 120)
        let withCaches = conformanceName().withCString { cf_heap_per_added_method($0, 100, 200, true) }
        print("heap per added and sent method: \(withCaches) B")
    }

    /// Protocols: creation, registration (twice: refused), descriptions, incorporation, adoption.
    func testProtocols() { run(cf_scenario_protocols) }

    /// The rest of objc4's runtime API from C (what the scenarios above leave out): setSuperclass with an
    /// instance alive, indexed ivars, association policies, method_invoke, a malformed property,
    /// an IMP from a function removed twice, long double through a C function IMP.
    func testRuntimeAPI() { run(cf_scenario_runtime_api) }

    /// objc_duplicateClass (objc4 test/duplicateClass.m): the copy's shape, KVO-style isa
    /// swizzling to it and back, and the refusals.
    func testDuplicateClass() { run(cf_scenario_duplicate_class) }

    // Hooks living with class swapping from C (conformance_class_swap.c): the object's class, the
    // IMP its sends reach and the method tables are exact after each step.

    /// Hooked, swapped to a KVO subclass (the hooks move with it and run around the override),
    /// hooks removed (the subclass stays), class restored.
    func testHookedObjectSwappedToKVOSubclassThenHooksRemovedFirstFromC() { run(cf_scenario_class_swap_hooked_then_hooks_removed) }

    /// Hooked, swapped, class restored first (the hooks stay and the KVO class can go), hooks removed.
    func testHookedObjectSwappedToKVOSubclassThenClassRestoredFirstFromC() { run(cf_scenario_class_swap_hooked_then_class_restored) }

    /// Hooked, swapped to an sf_duplicateClass copy and back, hooks removed on the copy one by one.
    func testHookedObjectSwappedToADuplicateAndBackFromC() { run(cf_scenario_class_swap_duplicate) }

    /// A swap to a class lacking the hooked method, or with other types, is
    /// SF_ERR_INCOMPATIBLE_CLASS naming both classes and the selector; nothing changes.
    func testSwapToAClassWithoutTheHookedMethodIsRefusedFromC() { run(cf_scenario_class_swap_refused) }

    /// Swapped first, hooked after; hooks removed first, then the class restored.
    func testSwappedObjectHookedThenHooksRemovedFirstFromC() { run(cf_scenario_class_swap_swapped_then_hooks_removed) }

    /// Swapped first, hooked after; class restored first, then the hooks removed.
    func testSwappedObjectHookedThenClassRestoredFirstFromC() { run(cf_scenario_class_swap_swapped_then_class_restored) }

    /// Class hooks on the original run through the override's super call for a swapped object,
    /// in order with the object's own hooks; removing them restores the original IMP.
    func testClassHooksOnTheOriginalRunForASwappedObjectFromC() { run(cf_scenario_class_swap_class_hooks) }

    /// A class hook removed while the object is swapped stops running, and the class comes back.
    func testClassHooksRemovedWhileTheObjectIsSwappedFromC() { run(cf_scenario_class_swap_class_hooks_removed) }

    /// Weak references from C (objc4 test/arr-weak.m, test/weakcopy.m): store re-points in
    /// place, copy and move, a store from dealloc, weak ivars and their layouts.
    func testWeakReferences() { run(cf_scenario_weak) }

    /// objc4 test/initialize.m from C: +initialize at the first message (an instance's
    /// creation), superclass first, inherited with the subclass as receiver, once.
    func testInitializeFromC() { run(cf_scenario_initialize) }

    /// An overridden dealloc from C releases what it owns and calls super up to a root class's
    /// own dealloc, whose super is the runtime's root dealloc; the wrong shape is refused.
    func testDeallocOverrideFromC() { run(cf_scenario_dealloc) }

    /// objc4 test/methodArgs.m from C: argument counts and types, copied and into buffers
    /// with strncpy semantics, out-of-range indices and NULL methods.
    func testMethodTypesFromC() { run(cf_scenario_method_types) }

    /// Small objects: a class registered for a tag, objects made from a payload, sends, class
    /// hooks, no-op retain/release, and every refusal (storage of its own, weak, setClass).
    func testSmallObjectsFromC() { run(cf_scenario_small_objects) }

    /// objc4 test/ivar.m from C: ivar handles found through the superclass chain (the
    /// declaring class's own handle), names, types and offsets, weak ivars, refusals.
    func testIvarHandlesFromC() { run(cf_scenario_ivars) }

    /// objc4 test/addMethods.mm from C: a bulk add reports and keeps what exists, overrides
    /// what is inherited, adds once from a list of duplicates; a bulk replace adds or replaces;
    /// a refused entry installs nothing of its list.
    func testBulkMethodsFromC() { run(cf_scenario_bulk_methods) }

    /// object_dispose from C: an instance with three references goes at once, with its
    /// observers, ivars, associations and weak references, and no dealloc message; one with
    /// hooks of its own too; NULL, class objects and a second disposal are refused.
    func testObjectDisposeFromC() { run(cf_scenario_dispose) }

    /// libobjc2's class_registerAlias_np from C: lookups by the alias find the class, names in
    /// use (a class's or an alias's) are refused, and disposal frees the class's aliases.
    func testClassAliasesFromC() { run(cf_scenario_alias) }

    /// objc4 test/forward.m's objc_setForwardHandler part from C: sf_msg_send and the
    /// forwarding IMP reach the handler with every argument, its answer is the result;
    /// declining and NULL leave SF_ERR_UNRECOGNIZED_SELECTOR.
    func testForwardHandlerFromC() { run(cf_scenario_forward_handler) }

    /// Blocks and C arrays in encodings from C: ivars at the offsets the C compiler gives the
    /// same members, an array argument passed as a pointer, object slots and blocks held
    /// strongly, malformed arrays refused naming the encoding.
    func testBlockAndArrayEncodingsFromC() { run(cf_scenario_block_array_encodings) }
}
