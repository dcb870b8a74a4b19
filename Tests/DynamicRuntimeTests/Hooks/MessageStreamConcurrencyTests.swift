import Synchronization
import TestSupport
import XCTest
@testable import DynamicRuntime

/// Message streams fed from many threads while a task consumes, and ended by their objects'
/// deallocation on those threads (run under TSan in CI).
final class MessageStreamConcurrencyTests: XCTestCase {
    func testEveryCallFromEightThreadsArrivesOnce() async throws {
        let cls = try RuntimeClass(name: uniqueName(name))
        try cls.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) -> Int in a + b }
        let objects = try (0..<8).map { _ in try cls.createInstance() }
        let stream = try cls.messages("add:to:", .afterOriginal)
        let perThread = 300
        let consumer = Task {
            var sum = 0, count = 0
            for await call in stream {
                sum += call.returnValue?.intValue ?? 0
                count += 1
                if count == 8 * perThread { break }
            }
            return (count, sum)
        }
        let refs = objects.map(\.ref)
        runThreads(8) { t in
            for i in 0..<perThread { _ = try? refs[t].send("add:to:", i, t, as: Int.self) }
        }
        let (count, sum) = await consumer.value
        XCTAssertEqual(count, 8 * perThread)
        XCTAssertEqual(sum, 8 * (0..<perThread).reduce(0, +) + perThread * (0..<8).reduce(0, +))
        XCTAssertTrue(cls.hooks(for: "add:to:").isEmpty)
        withExtendedLifetime(objects) {}
    }

    func testStreamsMadeAndEndedOnManyObjectsFromManyThreads() throws {
        let cls = try RuntimeClass(name: uniqueName(name))
        try cls.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) -> Int in a + b }
        let objects = try (0..<64).map { _ in try cls.createInstance() }
        let refs = objects.map(\.ref)
        let failures = Atomic<Int>(0)
        runThreads(8) { t in
            for round in 0..<20 {
                let ref = refs[(t * 8 + round) % refs.count]
                guard let stream = try? ref.messages("add:to:", bufferingPolicy: .bufferingNewest(1)) else {
                    failures.add(1, ordering: .relaxed)
                    continue
                }
                if (try? ref.send("add:to:", round, 1, as: Int.self)) != round + 1 { failures.add(1, ordering: .relaxed) }
                stream.cancel()
            }
        }
        XCTAssertEqual(failures.load(ordering: .relaxed), 0)
        XCTAssertTrue(refs.allSatisfy { $0.hooks(for: "add:to:").isEmpty })
        XCTAssertEqual(cls.hooks(for: "add:to:").count, 0)
        withExtendedLifetime(objects) {}
    }

    func testStreamsOfObjectsDeallocatedOnManyThreadsEndAfterTheirCalls() async throws {
        let cls = try RuntimeClass(name: uniqueName(name))
        try cls.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) -> Int in a + b }
        let streams = Locked<[MessageStream]>([])
        let perThread = 20, calls = 5
        runThreads(8) { t in
            for _ in 0..<perThread {
                guard let obj = try? cls.createInstance(), let stream = try? obj.messages("add:to:") else { continue }
                for i in 0..<calls { _ = try? obj.send("add:to:", i, t, as: Int.self) }
                streams.append(stream)
                // The object goes with this iteration, on this thread.
            }
        }
        let all = streams.take()
        XCTAssertEqual(all.count, 8 * perThread)
        let ended = expectation(description: "every stream ended")
        let counts = Task {
            var counts: [Int] = []
            for stream in all {
                var n = 0
                for await _ in stream { n += 1 }
                counts.append(n)
            }
            ended.fulfill()
            return counts
        }
        await fulfillment(of: [ended], timeout: 10)
        counts.cancel() // ends a stream still open if the test failed
        let seen = await counts.value
        XCTAssertEqual(seen, Array(repeating: calls, count: 8 * perThread))
        XCTAssertTrue(cls.hooks(for: "add:to:").isEmpty)
    }
}
