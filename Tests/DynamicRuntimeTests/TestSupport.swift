import CShims
import Foundation
import Glibc
import Synchronization
import XCTest
@testable import DynamicRuntime

/// Class names are process-wide: every test makes its own so tests never collide.
func uniqueName(_ base: String = #function) -> String {
    let stem = base.filter { $0.isLetter || $0.isNumber }
    return "\(stem)_\(nameCounter.add(1, ordering: .relaxed).newValue)"
}

private let nameCounter = Atomic<Int>(0)

/// Skips a test that exposes a known runtime bug; the assertions after it stay compiled and
/// run again once the line is removed, or now with SF_RUN_KNOWN_BUGS=1 (to check a fix).
func knownBug(_ description: String) throws {
    if getenv("SF_RUN_KNOWN_BUGS") != nil { return }
    throw XCTSkip("BUG: " + description)
}

/// Asserts that `body` throws exactly `expected`.
func assertThrows<T>(_ expected: RuntimeError, file: StaticString = #filePath, line: UInt = #line,
                     _ body: () throws -> T) {
    do {
        _ = try body()
        XCTFail("expected \(expected), nothing was thrown", file: file, line: line)
    } catch let error as RuntimeError {
        XCTAssertEqual(error, expected, file: file, line: line)
    } catch {
        XCTFail("expected \(expected), got \(error)", file: file, line: line)
    }
}

/// Returns the RuntimeError `body` throws (failing the test if it throws nothing).
func thrownError<T>(file: StaticString = #filePath, line: UInt = #line, _ body: () throws -> T) -> RuntimeError? {
    do {
        _ = try body()
        XCTFail("expected a RuntimeError, nothing was thrown", file: file, line: line)
        return nil
    } catch let error as RuntimeError {
        return error
    } catch {
        XCTFail("expected a RuntimeError, got \(error)", file: file, line: line)
        return nil
    }
}

/// Runs `body(i)` on `count` real threads that start together (a spin barrier) and joins them.
///
/// Plain pthreads rather than Dispatch: Dispatch's pool would run these on two cores' worth
/// of threads, and the tests want many threads preempting each other.
func runThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let ready = Atomic<Int>(0)
    var threads: [pthread_t] = []
    for i in 0..<count {
        let box = Unmanaged.passRetained(ThreadBox {
            ready.add(1, ordering: .acquiringAndReleasing)
            while ready.load(ordering: .acquiring) < count { sched_yield() }
            body(i)
        }).toOpaque()
        var tid = pthread_t()
        let rc = pthread_create(&tid, nil, { arg in
            let box = Unmanaged<ThreadBox>.fromOpaque(arg!).takeRetainedValue()
            box.run()
            return nil
        }, box)
        precondition(rc == 0, "pthread_create failed: \(rc)")
        threads.append(tid)
    }
    for t in threads { pthread_join(t, nil) }
}

private final class ThreadBox: @unchecked Sendable {
    let run: () -> Void
    init(_ run: @escaping () -> Void) { self.run = run }
}

/// Runs `body` on another thread and reports whether it finished within `seconds`.
///
/// For code that would spin forever if a bug came back: the test fails instead of hanging.
/// A semaphore wait with a deadline, not a sleep: it returns as soon as `body` finishes.
func finishes(within seconds: Double, _ body: @escaping @Sendable () -> Void) -> Bool {
    let done = DispatchSemaphore(value: 0)
    let box = Unmanaged.passRetained(ThreadBox { body(); done.signal() }).toOpaque()
    var tid = pthread_t()
    let rc = pthread_create(&tid, nil, { arg in
        Unmanaged<ThreadBox>.fromOpaque(arg!).takeRetainedValue().run()
        return nil
    }, box)
    precondition(rc == 0)
    if done.wait(timeout: .now() + seconds) == .success {
        pthread_join(tid, nil)
        return true
    }
    pthread_detach(tid)
    return false
}

/// Resident set size in bytes, from /proc/self/statm (second field, in pages).
func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// A C struct passed by value in two SSE registers.
struct Point: StructMessageValue, Equatable {
    var x: Double
    var y: Double
    static let typeEncoding = TypeEncoding.structure(name: "Point", fields: [.double, .double])
}

/// A small mixed struct passed in one integer register.
struct Pair32: StructMessageValue, Equatable {
    var a: Int32
    var b: Int32
    static let typeEncoding = TypeEncoding.structure(name: "Pair32", fields: [.int32, .int32])
}

/// A struct larger than two words: passed and returned through memory.
struct Quad: StructMessageValue, Equatable {
    var a, b, c, d: Int64
    static let typeEncoding = TypeEncoding.structure(name: "Quad", fields: [.int64, .int64, .int64, .int64])
}

/// Nested structs: a rectangle of two points.
struct Rect: StructMessageValue, Equatable {
    var origin: Point
    var size: Point
    static let typeEncoding = TypeEncoding.structure(name: "Rect", fields: [Point.typeEncoding, Point.typeEncoding])
}
