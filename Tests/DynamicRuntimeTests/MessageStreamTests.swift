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
        let weak = WeakReference(arg!)
        try a.send("take:", arg!.ref, as: Void.self)
        arg = nil
        XCTAssertNotNil(weak.object, "the buffered call holds its argument")
        stream.cancel()
        var seen = 0
        for await _ in stream { seen += 1 }
        XCTAssertEqual(seen, 1)
        XCTAssertNil(weak.object, "consumed: let go")
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
