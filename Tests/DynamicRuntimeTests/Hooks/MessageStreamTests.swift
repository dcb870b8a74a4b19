import Synchronization
import TestSupport
import XCTest
@testable import DynamicRuntime

/// Message streams (`messages(_:_:bufferingPolicy:)`) and deallocation streams: what they
/// yield, back-pressure, and that ending them removes what they installed.
final class MessageStreamTests: XCTestCase {
    private var cls: RuntimeClass!

    override func setUpWithError() throws {
        cls = try RuntimeClass(name: uniqueName(name))
        try cls.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) -> Int in a + b }
    }

    private func add(_ o: some MessageReceiver, _ a: Int, _ b: Int) throws -> Int {
        try o.send("add:to:", a, b, as: Int.self)
    }

    private func firstArguments(_ calls: [ObservedCall]) -> [Int?] { calls.map { $0.arguments.first?.intValue } }

    /// What `stream` yields until it ends; a stream still open after `limit` seconds fails the
    /// test (a bound for a failing test, not a measured time) and is cancelled.
    private func drain(_ stream: MessageStream, limit: TimeInterval = 10) async -> [ObservedCall] {
        let ended = expectation(description: "the stream ended")
        let calls = Locked<[ObservedCall]>([])
        let consumer = Task {
            for await call in stream { calls.append(call) }
            ended.fulfill()
        }
        await fulfillment(of: [ended], timeout: limit)
        consumer.cancel()
        return calls.take()
    }

    func testAnObjectsStreamSeesItsOwnCallsInOrderWithTheirArguments() async throws {
        let a = try cls.createInstance(), b = try cls.createInstance()
        let stream = try a.messages("add:to:")
        XCTAssertEqual(a.hooks(for: "add:to:").count, 1)
        XCTAssertEqual(try add(a, 1, 2), 3)
        XCTAssertEqual(try add(b, 3, 4), 7)
        XCTAssertEqual(try add(a, 5, 6), 11)
        var seen: [ObservedCall] = []
        for await call in stream {
            seen.append(call)
            if seen.count == 2 { break }
        }
        XCTAssertEqual(seen.map { $0.arguments.map(\.intValue) }, [[1, 2], [5, 6]])
        XCTAssertEqual(seen.map(\.receiver), [a.ref, a.ref])
        XCTAssertTrue(seen.allSatisfy { $0.returnValue == nil && $0.selector == "add:to:" })
        XCTAssertTrue(a.hooks(for: "add:to:").isEmpty, "leaving the loop removed the hook")
        XCTAssertEqual(try add(a, 1, 1), 2)
    }

    func testAClassStreamAfterTheOriginalCarriesReturnValuesOfEveryInstance() async throws {
        let a = try cls.createInstance(), b = try cls.createInstance()
        let stream = try cls.messages("add:to:", .afterOriginal)
        _ = try add(a, 1, 2)
        _ = try add(b, 30, 40)
        var seen: [ObservedCall] = []
        for await call in stream {
            seen.append(call)
            if seen.count == 2 { break }
        }
        XCTAssertEqual(seen.map(\.receiver), [a.ref, b.ref])
        XCTAssertEqual(seen.map { $0.returnValue?.intValue }, [3, 70])
        XCTAssertTrue(cls.hooks(for: "add:to:").isEmpty)
    }

    func testBufferingNewestKeepsTheLatestCallsAndCountsTheDropped() async throws {
        let a = try cls.createInstance()
        let stream = try a.messages("add:to:", bufferingPolicy: .bufferingNewest(2))
        for i in 1...5 { _ = try add(a, i, 0) }
        stream.cancel()
        XCTAssertTrue(a.hooks(for: "add:to:").isEmpty, "cancel removes the hook at once")
        _ = try add(a, 6, 0)
        var seen: [ObservedCall] = []
        for await call in stream { seen.append(call) }
        XCTAssertEqual(firstArguments(seen), [4, 5], "the buffered calls still arrive, then the end")
        XCTAssertEqual(stream.droppedCount, 3)
    }

    func testBufferingOldestKeepsTheFirstCalls() async throws {
        let stream = try cls.messages("add:to:", bufferingPolicy: .bufferingOldest(2))
        let a = try cls.createInstance()
        for i in 1...5 { _ = try add(a, i, 0) }
        stream.cancel()
        var seen: [ObservedCall] = []
        for await call in stream { seen.append(call) }
        XCTAssertEqual(firstArguments(seen), [1, 2])
        XCTAssertEqual(stream.droppedCount, 3)
    }

    func testCancellingTheIteratingTaskRemovesTheHook() async throws {
        let a = try cls.createInstance()
        let stream = try a.messages("add:to:")
        let started = Atomic<Bool>(false)
        let task = Task {
            var n = 0
            started.store(true, ordering: .releasing)
            for await _ in stream { n += 1 }
            return n
        }
        while !started.load(ordering: .acquiring) { await Task.yield() }
        _ = try add(a, 1, 2)
        task.cancel()
        _ = await task.value
        XCTAssertTrue(a.hooks(for: "add:to:").isEmpty)
        XCTAssertEqual(try add(a, 2, 2), 4)
    }

    func testDroppingAStreamUnusedRemovesTheHook() throws {
        let a = try cls.createInstance()
        do {
            let stream = try a.messages("add:to:", .afterOriginal)
            XCTAssertEqual(a.hooks(for: "add:to:").count, 1)
            withExtendedLifetime(stream) {}
        }
        XCTAssertTrue(a.hooks(for: "add:to:").isEmpty)
        do { _ = try cls.messages("add:to:") }
        XCTAssertTrue(cls.hooks(for: "add:to:").isEmpty)
    }

    func testBadSelectorsAreTypedErrors() throws {
        XCTAssertThrowsError(try cls.messages("missing:")) { XCTAssertTrue($0 is RuntimeError, "\($0)") }
        XCTAssertThrowsError(try ObjectRef.nil.messages("add:to:")) { XCTAssertTrue($0 is RuntimeError, "\($0)") }
    }

    func testObjectArgumentsStayAliveWhileBuffered() async throws {
        try cls.addMethod("take:") { (_: ObjectRef, _: ObjectRef) in }
        let a = try cls.createInstance()
        let stream = try a.messages("take:")
        var arg: Object? = try cls.createInstance()
        let weak = try WeakReference(arg!)
        try a.send("take:", arg!.ref, as: Void.self)
        arg = nil
        XCTAssertNotNil(weak.object, "the buffered call holds its argument")
        stream.cancel()
        var seen = 0
        for await _ in stream { seen += 1 }
        XCTAssertEqual(seen, 1)
        XCTAssertNil(weak.object, "consumed: let go")
    }

    // MARK: - the end of an object's streams

    func testAnObjectsStreamEndsAfterItsLastCallWhenTheObjectIsDeallocated() async throws {
        var obj: Object? = try cls.createInstance()
        let stream = try obj!.messages("add:to:", .afterOriginal)
        let seen = Locked<[Int?]>([])
        let first = expectation(description: "the first call reached the consumer")
        let ended = expectation(description: "the stream ended")
        let consumer = Task {
            for await call in stream {
                seen.append(call.returnValue?.intValue)
                if call.arguments.first?.intValue == 1 { first.fulfill() }
            }
            ended.fulfill()
        }
        XCTAssertEqual(try add(obj!, 1, 2), 3)
        await fulfillment(of: [first], timeout: 10)
        // The consumer waits in next() now.
        XCTAssertEqual(try add(obj!, 3, 4), 7)
        XCTAssertEqual(try add(obj!, 5, 6), 11)
        // A call a dealloc observer makes to the dying object is the stream's last.
        obj!.onDeallocate { dying in _ = try? dying.send("add:to:", 7, 8, as: Int.self) }
        obj = nil
        await fulfillment(of: [ended], timeout: 10)
        XCTAssertEqual(seen.take(), [3, 7, 11, 15], "every call, then the end")
        consumer.cancel()
    }

    func testAStreamStartedAfterTheCallsStillEndsWithTheObject() async throws {
        var obj: Object? = try cls.createInstance()
        let stream = try obj!.messages("add:to:", bufferingPolicy: .bufferingOldest(2))
        for i in 1...3 { _ = try add(obj!, i, 0) }
        let before = Runtime.liveObjectCount
        obj = nil
        XCTAssertEqual(Runtime.liveObjectCount, before - 1, "the stream does not keep its object")
        let seen = await drain(stream)
        XCTAssertEqual(firstArguments(seen), [1, 2])
        XCTAssertEqual(stream.droppedCount, 1)
    }

    func testAClassStreamOutlivesAnInstancesDeallocation() async throws {
        let stream = try cls.messages("add:to:")
        var gone: Object? = try cls.createInstance()
        let ownStream = try gone!.messages("add:to:")
        let kept = try cls.createInstance()
        _ = try add(gone!, 1, 0)
        gone = nil
        let own = await drain(ownStream)
        XCTAssertEqual(firstArguments(own), [1], "the instance's own stream ended")
        _ = try add(kept, 2, 0)
        var seen: [ObservedCall] = []
        for await call in stream {
            seen.append(call)
            if seen.count == 2 { break }
        }
        XCTAssertEqual(firstArguments(seen), [1, 2], "the class's stream goes on after an instance's dealloc")
        XCTAssertEqual(cls.hooks(for: "add:to:").count, 0, "leaving the loop removed the class hook")
    }

    func testCancellingAfterTheObjectEndedItsStreamIsHarmless() async throws {
        var obj: Object? = try cls.createInstance()
        let stream = try obj!.messages("add:to:")
        _ = try add(obj!, 1, 0)
        obj = nil
        stream.cancel()
        var seen: [ObservedCall] = []
        for await call in stream { seen.append(call) }
        XCTAssertEqual(firstArguments(seen), [1])
        let other = try cls.createInstance()
        XCTAssertEqual(try add(other, 2, 2), 4)
        XCTAssertTrue(other.hooks(for: "add:to:").isEmpty)
    }

    // MARK: - deallocation

    func testTheDeallocationArrivesOnceThenTheStreamEnds() async throws {
        var obj: Object? = try cls.createInstance()
        let stream = obj!.deallocation
        let address = UInt(bitPattern: obj!.raw)
        obj = nil
        var seen: [Deallocation] = []
        for await d in stream { seen.append(d) }
        XCTAssertEqual(seen.count, 1)
        XCTAssertEqual(seen.first?.className, cls.name)
        XCTAssertEqual(seen.first?.address, address)
    }

    func testACancelledDeallocationStreamEndsEmptyAndRemovesItsObserver() async throws {
        var obj: Object? = try cls.createInstance()
        let before = Runtime.liveObjectCount
        let stream = obj!.deallocation
        stream.cancel()
        var seen = 0
        for await _ in stream { seen += 1 }
        XCTAssertEqual(seen, 0)
        obj = nil
        XCTAssertEqual(Runtime.liveObjectCount, before - 1)
        XCTAssertEqual(seen, 0)
    }

    func testClassesAndNilEndAtOnce() async {
        for stream in [cls.receiver.deallocation, ObjectRef.nil.deallocation] {
            var seen = 0
            for await _ in stream { seen += 1 }
            XCTAssertEqual(seen, 0)
        }
    }
}
