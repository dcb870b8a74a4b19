import CInteropFixtures
import CDynamicRuntime
import Synchronization
import XCTest
@testable import DynamicRuntime

private let counter = Atomic<Int>(0)

/// The C API's hooks, invocations, forwarding handlers, C-function methods, rules and
/// introspection, driven from C (Tests/CInteropFixtures/capi_*.c) including bad input: NULL
/// everywhere, wrong indices and sizes, tokens removed twice, rules applied twice, released and
/// stale handles. Each scenario must also leave no object behind.
final class CAPIScenarioTests: XCTestCase {
    private func run(_ scenario: (UnsafePointer<CChar>) -> Int32, file: StaticString = #filePath, line: UInt = #line) {
        let objects = Runtime.liveObjectCount
        let name = "CAPI_\(counter.add(1, ordering: .relaxed).newValue)"
        let result = name.withCString { scenario($0) }
        // Frees the hook chains that discarded rules and removed hooks retired, and with them
        // the weak references into rules (their side tables would outlive the test otherwise).
        Runtime.state.collectGarbage()
        XCTAssertEqual(result, 0, String(cString: fx_capi_failure()), file: file, line: line)
        XCTAssertEqual(Runtime.liveObjectCount, objects, "the scenario released everything it made", file: file, line: line)
    }

    func testHooks() { run(fx_capi_hooks) }
    func testHookBadInput() { run(fx_capi_hook_bad_input) }
    func testObjectHooks() { run(fx_capi_object_hooks) }
    /// The error of a failed call through an IMP pointer stays that call's: a hooked method
    /// called through its pointer next runs its hooks and original and returns their answer.
    func testHookedCallThroughAPointerAfterAFailedOne() { run(fx_capi_hook_after_failed_direct_call) }
    func testInvocations() { run(fx_capi_invocations) }
    func testInvocationBadInput() { run(fx_capi_invocation_bad_input) }
    func testForwardingHandlers() { run(fx_capi_forwarding) }
    func testRules() { run(fx_capi_rules) }
    func testRuleBadInput() { run(fx_capi_rule_bad_input) }
    func testDelayedCooldownAndSharedTokens() { run(fx_capi_cooldown_tokens) }
    func testCooldownBadInput() { run(fx_capi_cooldown_bad_input) }
    func testIntrospection() { run(fx_capi_introspection) }

    func testHooksWaitingForAClassByName() {
        let handles = CPendingHooks.table.count
        let tokens = CHooks.tokens.withLock { $0.count }
        let waiting = HookRegistry.pendingHookCount
        run(fx_capi_when_available)
        XCTAssertEqual(CPendingHooks.table.count, handles, "every pending-hook handle released")
        XCTAssertEqual(CHooks.tokens.withLock { $0.count }, tokens, "no hook token left in the C table")
        XCTAssertEqual(HookRegistry.pendingHookCount, waiting, "no hook left waiting")
    }

    func testFunctionMethodsReleaseTheirContextWithTheMethod() {
        let released = fx_capi_released_contexts()
        let invocations = CInvocations.table.count
        run(fx_capi_function_methods)
        Runtime.state.collectGarbage()
        XCTAssertEqual(fx_capi_released_contexts() - released, 2, "both contexts released once the class was disposed")
        XCTAssertEqual(CInvocations.table.count, invocations)
    }
}
