import CInteropFixtures
import CDynamicRuntime
import Foundation
import Synchronization
import XCTest
@testable import DynamicRuntime

/// A cached send from C is async-signal-safe (docs/reliability.md, "Signal
/// handlers"). A real SIGUSR1 handler sends through `sf_msg_lookup` on threads interrupted
/// inside their own sends (C and Swift), while a writer swaps the method's IMP and churns
/// another class (retiring caches and closures, and freeing them after grace periods). A miss
/// takes the runtime lock, which the interrupted thread may hold: not signal-safe.
final class SignalHandlerTests: XCTestCase {
    final class Box: @unchecked Sendable {
        var thread = pthread_t()
        let stop = UnsafeMutablePointer<Int32>.allocate(capacity: 1)
        var calls = 0
        var wrong = 0
        init() { stop.initialize(to: 0) }
        deinit { stop.deallocate() }
    }

    func testACachedCSendFromASignalHandlerIsSafe() throws {
        let cls = try RuntimeClass(name: "Signal.Target")
        let sel = Selector("plusOne:")
        let method = try cls.addMethod(sel, implementation: IMP(unsafeBitCast(fx_plus_one as @convention(c) (sf_id?, sf_sel?, Int) -> Int, to: sf_imp.self)), types: "q@:q")
        let imps = [fx_plus_one, fx_plus_one_again].map {
            unsafeBitCast($0 as @convention(c) (sf_id?, sf_sel?, Int) -> Int, to: sf_imp.self)
        }
        let obj = try cls.createInstance()
        fx_signal_send_install(obj.raw, sel.raw)
        defer { fx_signal_send_uninstall() }

        let c = Box(), swift = Box()
        let ready = DispatchSemaphore(value: 0), group = DispatchGroup()
        group.enter()
        Thread {
            c.thread = pthread_self()
            _ = sf_msg_lookup(obj.raw, sel.raw)  // registered before the first signal
            ready.signal()
            var calls = 0
            c.wrong = fx_send_loop(obj.raw, sel.raw, c.stop, &calls)
            c.calls = calls
            group.leave()
        }.start()
        group.enter()
        Thread {
            swift.thread = pthread_self()
            _ = try? obj.send(sel, 0) as Int
            ready.signal()
            var n = 0
            while fx_flag_load(swift.stop) == 0 {
                if (try? obj.send(sel, n) as Int) != n + 1 { swift.wrong += 1 }
                n += 1
            }
            swift.calls = n
            group.leave()
        }.start()
        ready.wait()
        ready.wait()
        // The writer keeps the handler's method cached (an IMP swap does not flush) and churns
        // another class, whose retired caches and closures wait for every section to end.
        let other = try RuntimeClass(name: "Signal.Other")
        let otherObj = try other.createInstance()
        let writerStop = Atomic<Bool>(false)
        group.enter()
        Thread {
            var i = 0
            while !writerStop.load(ordering: .relaxed) {
                sf_method_setImplementation(method.raw, imps[i & 1])
                let extra = Selector("signal.extra\(i % 32):")
                _ = try? other.addMethod(extra) { (_: ObjectRef, x: Int) -> Int in x }
                _ = try? otherObj.send(extra, i) as Int
                try? other.removeMethod(extra)
                Runtime.state.collectGarbage()
                if i % 8 == 0 { usleep(100) }  // leave the 2 cores to the senders now and then
                i += 1
            }
            group.leave()
        }.start()

        // One signal at a time, each handled before the next (pending signals coalesce). The
        // wait blocks rather than spins: under load the interrupted thread may not run for a
        // long while, and a bounded spin then sent the next signal to a thread that still had
        // one pending (2 lost in 500). Only a handler that never finishes times out.
        let signals = 500
        var lost = 0
        var slowest = Duration.zero
        let clock = ContinuousClock()
        for i in 0..<signals {
            let start = clock.now
            pthread_kill(i & 1 == 0 ? c.thread : swift.thread, SIGUSR1)
            if fx_signal_send_wait(60) == 0 { lost += 1 }
            slowest = max(slowest, clock.now - start)
        }
        print("signal handler sends: \(signals), slowest from pthread_kill to the end of the handler: \(slowest)")
        writerStop.store(true, ordering: .relaxed)
        fx_flag_store(c.stop, 1)
        fx_flag_store(swift.stop, 1)
        group.wait()

        let handled = fx_signal_send_count()
        XCTAssertEqual(lost, 0, "signals not handled (a handler that hung?)")
        XCTAssertEqual(handled, signals)
        XCTAssertEqual(fx_signal_send_failures(), 0, "a send from the handler found no method")
        XCTAssertEqual(fx_signal_send_sum(), 2 * handled, "a send from the handler returned a wrong value")
        XCTAssertEqual(c.wrong, 0, "the interrupted C sender got a wrong value")
        XCTAssertEqual(swift.wrong, 0, "the interrupted Swift sender got a wrong value")
        XCTAssertGreaterThan(c.calls, 0)
        XCTAssertGreaterThan(swift.calls, 0)
    }
}
