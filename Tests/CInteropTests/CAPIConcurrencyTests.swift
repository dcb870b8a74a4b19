import CInteropFixtures
import CDynamicRuntime
import Dispatch
import XCTest
@testable import DynamicRuntime

/// The C API's handle tables and hooks under many threads (also run under TSan in CI): C hooks
/// installed and removed while other threads send through them, and invocation handles made,
/// used, copied and released concurrently, with stale handles refused rather than crashing.
final class CAPIConcurrencyTests: XCTestCase {
    func testHooksAndInvocationHandlesFromManyThreads() throws {
        let cls = try RuntimeClass(name: "CAPIConcurrency_\(UInt(bitPattern: ObjectIdentifier(self).hashValue))")
        try cls.addMethod("add:") { (_: ObjectRef, a: Int) in a + 1 }
        let obj = try cls.createInstance()
        // Immutable pointers shared by the threads (the objects outlive the loop).
        nonisolated(unsafe) let raw = obj.raw, sel = Selector("add:").raw, clsRaw = cls.raw
        let failures = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { t in
            for i in 0..<200 {
                switch t % 3 {
                case 0:
                    // Install and remove a C hook; each token removes exactly once.
                    let token = sf_class_hookMethod(clsRaw, sel, SF_HOOK_BEFORE, nil, fx_capi_counting_hook, nil)
                    if token == 0 { failures.withLock { $0.append("hook: \(String(cString: sf_last_error_message()))") } }
                    if sf_hook_remove(token) != SF_OK || sf_hook_remove(token) != SF_ERR_INVALID_ARGUMENT {
                        failures.withLock { $0.append("remove \(token)") }
                    }
                case 1:
                    var r = 0, a = i
                    let status = withUnsafeMutablePointer(to: &a) { ap in
                        var args: [UnsafeMutableRawPointer?] = [UnsafeMutableRawPointer(ap)]
                        return sf_msg_send(raw, sel, &r, &args)
                    }
                    if status != SF_OK || r != i + 1 { failures.withLock { $0.append("send \(i): \(status.rawValue) \(r)") } }
                default:
                    let inv = sf_invocation_create(raw, sel, "q@:q")
                    var a = i, r = 0
                    let copy = sf_invocation_copy(inv)
                    let ok = sf_invocation_setArgument(inv, 0, &a, 8) == SF_OK && sf_invocation_invoke(inv) == SF_OK
                        && sf_invocation_getReturnValue(inv, &r, 8) == SF_OK && r == i + 1
                        && sf_invocation_release(inv) == SF_OK && sf_invocation_release(copy) == SF_OK
                        && sf_invocation_invoke(inv) == SF_ERR_INVALID_ARGUMENT
                    if !ok { failures.withLock { $0.append("invocation \(i): \(String(cString: sf_last_error_message()))") } }
                }
            }
        }
        XCTAssertEqual(failures.withLock { $0 }, [])
        // Whether a send overlapped an installed hook above is up to the scheduler; afterwards
        // a hook installed from C still runs.
        let before = fx_capi_counting_hook_calls()
        let token = sf_class_hookMethod(clsRaw, sel, SF_HOOK_BEFORE, nil, fx_capi_counting_hook, nil)
        let r: Int = try obj.send("add:", 1)
        XCTAssertEqual(r, 2)
        XCTAssertEqual(fx_capi_counting_hook_calls(), before + 1)
        XCTAssertEqual(sf_hook_remove(token), SF_OK)
        Runtime.state.collectGarbage()
    }

    /// Threads racing to a C class's first message (objc4 test/initialize.m, GNUstep's
    /// config.initialize.m): one runs +initialize, the others wait for it to return.
    func testInitializeRaceFromC() {
        let result = "CAPIConcurrencyInitRace".withCString { cf_scenario_initialize_race($0) }
        XCTAssertEqual(result, 0, String(cString: cf_failure()))
    }
}
