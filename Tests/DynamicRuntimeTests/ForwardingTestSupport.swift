// Shared helpers for the forwarding, invocation and hook tests (issue 3).
//
// Classes are registered process-wide by name and every test in the process shares that
// registry, so every class these tests make gets a unique name from `uniqueClassName`.
import CShims
import Foundation
import Glibc
import XCTest
@testable import DynamicRuntime

private let classCounter = FwdLocked(0)

/// A class name no other test in the process uses: `base_<counter>_<uuid prefix>`.
func uniqueClassName(_ base: String) -> String {
    let n = classCounter.withLock { (v: inout Int) -> Int in
        v += 1
        return v
    }
    return "\(base)_\(n)_\(UUID().uuidString.prefix(8))"
}

/// Makes and registers a uniquely named class (with its lookup caches allocated; see `fwdWarm`).
func makeClass(_ base: String, superclass: RuntimeClass? = nil,
               ivars: [(name: String, type: TypeEncoding)] = []) throws -> RuntimeClass {
    fwdWarm(try RuntimeClass(name: uniqueClassName(base), superclass: superclass, ivars: ivars))
}

/// WORKAROUND for a CShims bug (see ForwardingKnownBugTests.testProbeOfAFreshClassAfterCacheGrowth):
/// a class whose cache is still the shared `sf_empty_cache` is probed past the end of that
/// struct, into the `retired_head` static of cache.c; while a grown cache waits to be freed,
/// that word is non-NULL and the probe spins forever. Filling the cache once through the
/// slow path gives the class (and its metaclass) a real cache, which never goes back.
@discardableResult
func fwdWarm(_ cls: RuntimeClass) -> RuntimeClass {
    let sel = Selector("__fwdWarmUp")
    _ = cls.lookUpAndCache(sel)
    _ = cls.metaclass.lookUpAndCache(sel)
    return cls
}

/// `fwdWarm` for the class an object's sends start at (a hidden per-object class after a hook).
func fwdWarmIsa(_ receiver: some MessageReceiver) {
    guard let raw = receiver.receiver.raw else { return }
    fwdWarm(RuntimeClass.from(sf_object_isa(raw)))
}

/// A proxy class with warmed caches.
func makeProxyClass(_ base: String,
                    intercept: ((Invocation, _ proceed: () throws -> Void) throws -> Void)? = nil) throws -> RuntimeClass {
    fwdWarm(try Proxy.makeClass(name: uniqueClassName(base), intercept: intercept))
}

/// A value shared across threads and closures, behind a lock.
final class FwdLocked<T>: @unchecked Sendable {
    private var value: T
    private let lock = NSLock()
    init(_ value: T) { self.value = value }
    func withLock<R>(_ body: (inout T) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
    var current: T { withLock { $0 } }
    func set(_ v: T) { withLock { $0 = v } }
}

/// Runs `body` and returns the RuntimeError it throws; fails the test if it throws nothing or
/// something else.
@discardableResult
func fwdError<T>(_ body: () throws -> T, file: StaticString = #filePath, line: UInt = #line) -> RuntimeError? {
    do {
        let v = try body()
        XCTFail("expected a RuntimeError, got a value: \(v)", file: file, line: line)
        return nil
    } catch let e as RuntimeError {
        return e
    } catch {
        XCTFail("expected a RuntimeError, got \(type(of: error)): \(error)", file: file, line: line)
        return nil
    }
}

extension RuntimeError {
    var isDoesNotRecognize: Bool { if case .doesNotRecognizeSelector = self { true } else { false } }
    var isForwardingFailed: Bool { if case .forwardingFailed = self { true } else { false } }
    var isSignatureMismatch: Bool { if case .signatureMismatch = self { true } else { false } }
    var isInvalidArgument: Bool { if case .invalidArgument = self { true } else { false } }
    var isHookFailed: Bool { if case .hookFailed = self { true } else { false } }
    var isReservedSelector: Bool { if case .reservedSelector = self { true } else { false } }
    var isImplementationFailed: Bool { if case .implementationFailed = self { true } else { false } }
    var isMalformedEncoding: Bool { if case .malformedEncoding = self { true } else { false } }
}

/// An error a test hook or method throws.
struct FwdTestError: Error, CustomStringConvertible {
    let message: String
    var description: String { "FwdTestError(\(message))" }
}

// MARK: - Structs passed by value

struct FwdPoint: StructMessageValue, Equatable {
    var x: Double
    var y: Double
    static let typeEncoding = TypeEncoding.structure(name: "Point", fields: [.double, .double])
}

struct FwdSize: StructMessageValue, Equatable {
    var width: Double
    var height: Double
    static let typeEncoding = TypeEncoding.structure(name: "Size", fields: [.double, .double])
}

struct FwdRect: StructMessageValue, Equatable {
    var origin: FwdPoint
    var size: FwdSize
    static let typeEncoding = TypeEncoding.structure(
        name: "Rect", fields: [FwdPoint.typeEncoding, FwdSize.typeEncoding])
}

/// Three bytes: returned in a register, smaller than a word.
struct FwdRGB: StructMessageValue, Equatable {
    var r: UInt8
    var g: UInt8
    var b: UInt8
    static let typeEncoding = TypeEncoding.structure(name: "RGB", fields: [.uint8, .uint8, .uint8])
}

// MARK: - Process measurements

/// Resident set size in bytes, from /proc/self/statm.
func fwdResidentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// Under AddressSanitizer: the bytes the process has allocated with malloc and not freed yet,
/// from ASan's allocator (`__sanitizer_get_current_allocated_bytes`); nil without ASan.
///
/// RSS says nothing about leaks under ASan: freed blocks stay in its quarantine (up to 256 MB)
/// and shadow memory is mapped as the heap is touched, so RSS grows by tens of MB with no leak.
/// Quarantined blocks are not counted here, so this is exact. (Without ASan, RSS is the
/// measure: glibc's `mallinfo2` is not visible to Swift through the Glibc module.)
func fwdLiveHeapBytes() -> Int? {
    guard let sym = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__sanitizer_get_current_allocated_bytes") else {
        return nil
    }
    return unsafeBitCast(sym, to: (@convention(c) () -> Int).self)()
}

/// Frees whatever retired hooks, chains and caches no reader can reach.
func fwdCollect() {
    Runtime.state.collectGarbage()
    Runtime.state.collectGarbage()
}

/// Runs `body` on a new thread and waits for it; returns whether it ran on another thread.
@discardableResult
func fwdRunOnNewThread(_ body: @escaping @Sendable () -> Void) -> Bool {
    let done = DispatchSemaphore(value: 0)
    let mainID = FwdLocked<pthread_t?>(pthread_self())
    let sameThread = FwdLocked(true)
    let t = Thread {
        sameThread.set(pthread_equal(pthread_self(), mainID.current!) != 0)
        body()
        done.signal()
    }
    t.stackSize = 8 << 20
    t.start()
    done.wait()
    return !sameThread.current
}

/// Starts `count` threads running `body(index)` and waits for all of them.
func fwdRunThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for i in 0..<count {
        group.enter()
        let t = Thread {
            body(i)
            group.leave()
        }
        t.stackSize = 4 << 20
        t.start()
    }
    group.wait()
}

/// A canonical text for a dynamic value, struct bytes included (DynamicValue is not Equatable).
func fwdFingerprint(_ v: DynamicValue) -> String {
    switch v {
    case let .structure(t, bytes): "\(t.encoding)[\(bytes.map { String($0) }.joined(separator: ","))]"
    case let .float(f): "f\(f.bitPattern)"
    case let .double(d): "d\(d.bitPattern)"
    case let .object(o): "@\(o.map { String(UInt(bitPattern: $0.raw)) } ?? "nil")"
    case let .cString(s): "*\(s.string ?? "NULL")"
    default: "\(v.typeEncoding.encoding):\(v)"
    }
}

/// A C string that lives for the whole test process (tests compare contents, not pointers).
/// Each copy is kept in `fwdStaticCStrings`, so that it stays reachable: LeakSanitizer reports
/// a copy that nothing points to any more.
func fwdStaticCString(_ s: String) -> CString {
    let copy = UnsafePointer(strdup(s)!)
    fwdStaticCStrings.withLock { $0.append(copy) }
    return CString(copy)
}

private let fwdStaticCStrings = FwdLocked<[UnsafePointer<CChar>]>([])

/// A C function pointer as a comparable IMP (C function types are not Equatable in Swift).
func fwdIMP(_ p: sf_imp?) -> IMP? { p.map { IMP($0) } }
