// A reader parked inside a send keeps everything retired after it entered,
// but a writer's cost per retired item must stay constant: a collection that walked the whole
// waiting list would make it quadratic in the cycles run while the reader is parked.
import TestSupport
import CDynamicRuntime
import Foundation
import XCTest
@testable import DynamicRuntime

final class RetirementConcurrencyTests: XCTestCase {
    private func visits() -> UInt64 { Runtime.state.lock.withLock { sf_retired_visits() } }

    func testWriterCostStaysConstantWhileAReaderIsParkedInASend() throws {
        let cls = try makeClass("Parked")
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        try cls.addMethod("park") { (_: ObjectRef) -> Int in
            entered.signal()
            release.wait()
            return 1
        }
        try cls.addMethod("work:") { (_: ObjectRef, x: Int) in x + 1 }
        let parked = try cls.createInstance()
        let o = try cls.createInstance()
        fwdCollect()
        let closures = Runtime.liveClosureCount
        let waiting = Runtime.state.retiredCount

        let reader = Thread {
            XCTAssertEqual(try? parked.send("park") as Int, 1)
            finished.signal()
        }
        reader.start()
        entered.wait()

        let rss = residentBytes()
        let visitsBefore = visits()
        let cycles = 1_600
        for i in 0..<cycles {
            let token = try cls.hook("work:", .before) { _ in }
            XCTAssertEqual(try o.send("work:", i) as Int, i + 1)
            token.remove()
            Runtime.state.collectGarbage()
        }
        let kept = Runtime.state.retiredCount - waiting
        let visited = visits() - visitsBefore
        let grown = residentBytes() - rss
        print("parked reader, \(cycles) hook/unhook cycles: \(kept) items waiting (\(Double(kept) / Double(cycles)) per cycle), "
              + "\(visited) list entries examined (\(Double(visited) / Double(cycles)) per cycle), RSS +\(grown >> 10) KiB")

        // Nothing retired after the reader entered can be freed yet, so the list grows: by a
        // few items per cycle, not more.
        XCTAssertGreaterThanOrEqual(kept, cycles, "each cycle retires at least its hook chain")
        XCTAssertLessThanOrEqual(kept, cycles * 8)
        // Each collection looks at the first waiting item and stops: a constant per cycle,
        // however long the list.
        XCTAssertLessThanOrEqual(visited, UInt64(cycles * 4))
        XCTAssertLessThan(grown, 64 << 20, "memory held while parked stays linear and small")

        release.signal()
        finished.wait()
        fwdCollect()
        XCTAssertEqual(Runtime.state.retiredCount, waiting, "everything is freed once the reader leaves")
        XCTAssertEqual(Runtime.liveClosureCount, closures, "the trampolines went with their hooks")
    }
}
