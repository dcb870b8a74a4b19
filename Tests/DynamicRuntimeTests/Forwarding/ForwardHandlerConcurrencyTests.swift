// Sends that end at the process-wide forward handler on 8 threads while another thread swaps
// the handler between two answers and the default (run under TSan in CI).
import TestSupport
import CDynamicRuntime
import Dispatch
import Foundation
import XCTest
@testable import DynamicRuntime

final class ForwardHandlerConcurrencyTests: XCTestCase {
    override func tearDown() {
        RuntimeClass.setForwardHandler(nil)
        super.tearDown()
    }

    func testSendsWhileTheHandlerIsSwapped() throws {
        let typed = try makeClass("FwdHandlerConcTyped").createInstance()
        let declared = try makeClass("FwdHandlerConcDeclared")
        try declared.setMethodSignature { _, _ in try Signature("q@:qq") }
        let dynamic = try declared.createInstance()
        let refs = [typed.ref, dynamic.ref]
        // add:to: answered as a + b, or a + b + 1000; with the default, the typed error.
        let sum: @Sendable (Invocation) throws -> Bool = { inv in
            try inv.setReturnValue(try inv.argument(at: 0, as: Int.self) + inv.argument(at: 1, as: Int.self))
            return true
        }
        let plus1000: @Sendable (Invocation) throws -> Bool = { inv in
            try inv.setReturnValue(try inv.argument(at: 0, as: Int.self) + inv.argument(at: 1, as: Int.self) + 1000)
            return true
        }
        let stop = Locked(false)
        let bad = Locked<[String]>([])
        let answered = Locked(0), refused = Locked(0)
        let writer = Thread {
            var i = 0
            while !stop.current {
                i += 1
                switch i % 3 {
                case 0: RuntimeClass.setForwardHandler(sum)
                case 1: RuntimeClass.setForwardHandler(plus1000)
                default: RuntimeClass.setForwardHandler(nil)
                }
            }
        }
        writer.start()
        DispatchQueue.concurrentPerform(iterations: 8) { t in
            // Typed sends to both objects; dynamic ones (threads 3 and 7) to the one declaring types.
            let ref = refs[t % 2]
            for i in 0..<300 {
                do {
                    let r: Int = t % 4 != 3 ? try ref.send("add:to:", i, t) : try ref.send("add:to:", i, t).intValue ?? -1
                    if r != i + t, r != i + t + 1000 { bad.append("thread \(t): \(r) for \(i) + \(t)") }
                    answered.withLock { $0 += 1 }
                } catch RuntimeError.doesNotRecognizeSelector(let info) where info.selector == "add:to:" {
                    refused.withLock { $0 += 1 }
                } catch {
                    bad.append("thread \(t): \(error)")
                }
            }
        }
        stop.set(true)
        while !writer.isFinished { usleep(1000) }
        XCTAssertEqual(bad.current, [])
        XCTAssertEqual(answered.current + refused.current, 8 * 300)
        // Settled: every send sees the handler installed last.
        RuntimeClass.setForwardHandler(plus1000)
        for ref in refs { XCTAssertEqual(try ref.send("add:to:", 1, 2) as Int, 1003) }
    }
}
