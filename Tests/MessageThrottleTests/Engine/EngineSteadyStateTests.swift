import TestSupport
import Foundation
import XCTest
@testable import DynamicRuntime
@testable import MessageThrottle

/// A stream of captured calls allocates nothing in steady state: records are reused, and
/// no objects or closures accumulate.
final class EngineSteadyStateTests: XCTestCase {
    /// A record seen as `rule.pendingInvocation`, held weakly so the engine can still reuse it.
    private final class SeenRecord {
        weak var storage: InvocationStorage?
        init(_ storage: InvocationStorage) { self.storage = storage }
    }

    func testABurstOfTenThousandCapturedCallsInLastModeReusesItsRecords() throws {
        let fx = try makeFixture()
        let obj = try fx.instance()
        let rule = try obj.limit("take:", oncePer: .seconds(3600), mode: .last, in: fx.engine)
        let args = try (0..<3).map { try fx.payload($0) }
        for i in 0..<10 { try fx.take(obj, args[i % 3]) }   // warm up
        collectRuntimeGarbage()
        let objects = Runtime.liveObjectCount
        let closures = Runtime.liveClosureCount

        var seen: [SeenRecord] = []
        var identities = Set<ObjectIdentifier>()
        for i in 0..<10_000 {
            try fx.take(obj, args[i % 3])
            // Look at the pending record without keeping a strong reference past this scope.
            let (storage, tag): (InvocationStorage, Int) = try {
                let pending = try XCTUnwrap(rule.pendingInvocation)
                let tag = try XCTUnwrap(pending.argumentValue(at: 0).objectValue).value(ofIvar: "tag", as: Int.self)
                return (pending.storage, tag)
            }()
            XCTAssertEqual(tag, i % 3, "the pending record carries the latest argument")
            identities.insert(ObjectIdentifier(storage))
            if !seen.contains(where: { $0.storage === storage }) { seen.append(SeenRecord(storage)) }
            if i % 1000 == 999 {
                XCTAssertEqual(Runtime.liveObjectCount, objects, "after \(i + 1) calls")
                XCTAssertEqual(Runtime.liveClosureCount, closures, "after \(i + 1) calls")
            }
        }
        XCTAssertLessThanOrEqual(seen.count, 3, "the pending record cycles among a few records")
        XCTAssertLessThanOrEqual(identities.count, 3)
        XCTAssertTrue(seen.allSatisfy { $0.storage != nil }, "the records seen are all still in use")
        XCTAssertEqual(args.map(\.retainCount).sorted(), [1, 1, 2], "only the pending call retains its argument")
        XCTAssertEqual(fx.log.objectTags, [], "nothing performed within the window")
        fx.advance(to: 3_600_000)
        XCTAssertEqual(fx.log.objectTags, [9_999 % 3], "one performance, with the last argument")
        XCTAssertEqual(args.map(\.retainCount), [1, 1, 1])
        XCTAssertEqual(Runtime.liveObjectCount, objects)
    }

    func testSteadyStreamsDoNotAccumulateObjectsOrClosuresInAnyMode() throws {
        for mode in allEngineModes {
            let fx = try makeFixture()
            let obj = try fx.instance()
            let rule = try obj.limit("take:", oncePer: .milliseconds(10), mode: mode, in: fx.engine)
            rule.onReject = { _ in }
            let args = try (0..<3).map { try fx.payload($0) }
            for i in 0..<50 { fx.advance(to: i); try fx.take(obj, args[i % 3]) }   // warm up
            collectRuntimeGarbage()
            let objects = Runtime.liveObjectCount
            let closures = Runtime.liveClosureCount
            // One call per virtual millisecond: windows open and close all the time.
            for i in 50..<3050 {
                fx.advance(to: i)
                try fx.take(obj, args[i % 3])
            }
            fx.advance(to: 10_000)
            XCTAssertNil(rule.pendingInvocation, "\(mode)")
            XCTAssertEqual(Runtime.liveObjectCount, objects, "\(mode)")
            XCTAssertEqual(Runtime.liveClosureCount, closures, "\(mode)")
            XCTAssertEqual(args.map(\.retainCount), [1, 1, 1], "\(mode)")
            XCTAssertEqual(fx.clock.scheduledCount, 0, "\(mode)")
        }
    }
}
