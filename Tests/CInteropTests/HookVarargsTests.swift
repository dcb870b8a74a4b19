import CInteropFixtures
import CDynamicRuntime
import XCTest
@testable import DynamicRuntime

/// A hook calls its original directly, never through `ffi_call`, so the direct call
/// must set `%al` to the vector registers it used, as a variadic original needs: glibc's
/// `va_start` saves `xmm0-7` only when `%al` is not 0. `fx_sum_doubles` (a C method body,
/// `- (double)sum:(int)n, ...`) reads its doubles with `va_arg`; the hooked method is called
/// from C through a prototype that is not variadic, so nothing but the hook sets `%al`.
final class HookVarargsTests: XCTestCase {
    typealias Sum3 = @convention(c) (sf_id?, sf_sel?, Int32, Double, Double, Double) -> Double
    typealias Sum10 = @convention(c) (sf_id?, sf_sel?, Int32, Double, Double, Double, Double, Double,
                                      Double, Double, Double, Double, Double) -> Double

    override func tearDown() {
        HookEntryKind.registerEntriesEnabled.store(true, ordering: .relaxed)
        super.tearDown()
    }

    func testAHookCallsAVariadicOriginalWithItsVectorRegisterCount() throws {
        sf_tramp_set_enabled(1)
        let cls = try RuntimeClass(name: "HookVarargs")
        let sum3: Selector = "sum3:a:b:c:", sum10: Selector = "sum10:a:b:c:d:e:f:g:h:i:j:"
        try cls.addMethod(sum3, implementation: IMP(fx_sum_doubles_imp()), types: "d@:iddd")
        try cls.addMethod(sum10, implementation: IMP(fx_sum_doubles_imp()), types: "d@:idddddddddd")
        let o = try cls.createInstance()
        let values = (1...10).map { Double($0) * 1.25 }
        for registerEntries in [true, false] {
            HookEntryKind.registerEntriesEnabled.store(registerEntries, ordering: .relaxed)
            let calls = Locked(0)
            let t3 = try cls.hook(sum3, .instead) { ctx in calls.withLock { $0 += 1 }; try ctx.proceed() }
            let t10 = try cls.hook(sum10, .instead) { ctx in calls.withLock { $0 += 1 }; try ctx.proceed() }
            XCTAssertEqual(t3.hook.entry, registerEntries ? .registers(3) : .spill)
            XCTAssertEqual(t10.hook.entry, .spill, "two doubles on the stack")
            let f3 = unsafeBitCast(try XCTUnwrap(sf_msg_lookup(o.raw, sum3.raw)), to: Sum3.self)
            let f10 = unsafeBitCast(try XCTUnwrap(sf_msg_lookup(o.raw, sum10.raw)), to: Sum10.self)
            XCTAssertEqual(f3(o.raw, sum3.raw, 3, values[0], values[1], values[2]), values[0..<3].reduce(0, +),
                           "three doubles in registers (register entries: \(registerEntries))")
            XCTAssertEqual(f10(o.raw, sum10.raw, 10, values[0], values[1], values[2], values[3], values[4],
                               values[5], values[6], values[7], values[8], values[9]), values.reduce(0, +),
                           "eight doubles in registers, two on the stack (register entries: \(registerEntries))")
            XCTAssertEqual(calls.withLock { $0 }, 2)
            t3.remove()
            t10.remove()
        }
    }
}
