// Shared by the trampoline tests: every signature class called through closure IMPs and
// hooks, with deterministic bytes per argument, from a real System V caller (libffi's ffi_call)
// and from the runtime's own direct call (sf_tramp_call_args).
import TestSupport
import CDynamicRuntime
import Foundation
import XCTest
@testable import DynamicRuntime

/// One signature per class of argument passing and return.
let trampolineSignatures: [String] = [
    "v@:", "v@:qd",                         // Void, without and with arguments
    "q@:", "q@:q", "q@:qq", "q@:qqq", "q@:qqqq",  // 0-4 integers: in registers with self and _cmd
    "q@:qqqqq",                             // 5 integers: the last one on the stack
    "q@:qqqqqq",                            // 6 integers: the last two on the stack
    "q@:qqqqqqqqq",                         // more than 6: stack
    "c@:cCsSiI", "S@:s", "i@:c",            // small integers, widened returns
    "d@:dddddddd",                          // 8 doubles in registers
    "d@:dddddddddd",                        // more than 8: stack
    "f@:ffff",                              // floats
    "f@:ffffffff",                          // 8 floats in registers
    "f@:ffffffffff",                        // more than 8 floats: stack
    "d@:qdqfqdiq",                          // mixed
    "^v@:^v:*",                             // pointers and a selector
    "{P=dd}@:{P=dd}d",                      // SSE struct, returned in xmm0:xmm1
    "{F=ff}@:{F=ff}",                       // two floats in one register
    "{T=fff}@:{T=fff}",                     // 12 bytes, two SSE eightbytes
    "{Q=qq}@:{Q=qq}",                       // INTEGER struct, returned in rax:rdx
    "{I=iii}@:{I=iii}",                     // 12 bytes, two INTEGER eightbytes
    "{M=qd}@:{M=qd}{N=dq}",                 // split between the register files, both orders
    "{N=dq}@:{M=qd}",                       // split return, SSE first
    "{L=qqqq}@:{L=qqqq}q",                  // memory struct argument and return
    "{L=qqqq}@:qqqqqq{L=qqqq}d",            // memory return with every register used
    "q@:qqq{Q=qq}q",                        // a struct that no longer fits goes to the stack; later arguments still use registers
    "d@:ddddddd{P=dd}d",                    // the same for SSE
    "{B=ccc}@:{B=ccc}c",                    // a 3-byte struct, in and out of one register
    "{D=dddd}@:{D=dddd}f",                  // an SSE struct too large for registers: memory both ways
]

/// Deterministic bytes for one value.
func trampolineBytes(_ count: Int, seed: Int) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: seed &* 37 &+ $0 &* 11 &+ 3) }
}

/// What a raw-body closure method saw, and what it returned.
final class TrampolineProbe: @unchecked Sendable {
    var received: [[UInt8]] = []
    let signature: Signature
    let returnBytes: [UInt8]
    let returnSize: Int

    init(_ signature: Signature) {
        self.signature = signature
        returnSize = Int(sf_ffi_type_size(signature.raw.pointee.return_type))
        returnBytes = trampolineBytes(signature.returnType == .void ? 0 : returnSize, seed: 99)
    }

    func body(_ ret: UnsafeMutableRawPointer, _ args: UnsafeMutablePointer<UnsafeMutableRawPointer?>) {
        let sizes = signature.storage.argumentSizes
        received = (2..<sizes.count).map { Array(UnsafeRawBufferPointer(start: args[$0], count: sizes[$0])) }
        returnBytes.withUnsafeBytes { ret.copyMemory(from: $0.baseAddress!, byteCount: returnBytes.count) }
    }
}

/// Calls `imp` with every argument's bytes; returns the return value's bytes.
func trampolineCall(_ signature: Signature, _ imp: sf_imp, receiver: sf_id, selector: Selector,
                    arguments: [[UInt8]], direct: Bool) -> [UInt8] {
    let size = Int(sf_ffi_type_size(signature.raw.pointee.return_type))
    var buffers: [UnsafeMutableRawPointer] = []
    var receiverWord = receiver
    var selectorWord = selector.raw
    defer { buffers.forEach { $0.deallocate() } }
    let ret = UnsafeMutableRawPointer.allocate(byteCount: max(size, 8) + 16, alignment: 16)
    defer { ret.deallocate() }
    ret.initializeMemory(as: UInt8.self, repeating: 0xEE, count: max(size, 8) + 16)
    let argv = UnsafeMutablePointer<UnsafeMutableRawPointer?>.allocate(capacity: arguments.count + 2)
    defer { argv.deallocate() }
    withUnsafeMutablePointer(to: &receiverWord) { r in
        withUnsafeMutablePointer(to: &selectorWord) { s in
            argv[0] = UnsafeMutableRawPointer(r)
            argv[1] = UnsafeMutableRawPointer(s)
            for (i, bytes) in arguments.enumerated() {
                let b = UnsafeMutableRawPointer.allocate(byteCount: max(bytes.count, 8), alignment: 16)
                bytes.withUnsafeBytes { b.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
                buffers.append(b)
                argv[i + 2] = b
            }
            if direct {
                sf_tramp_call_args(signature.storage.layout!, unsafeBitCast(imp, to: UnsafeRawPointer.self), ret, argv)
            } else {
                sf_ffi_call(&signature.storage.raw.pointee.cif, imp, ret, argv)
            }
        }
    }
    return signature.returnType == .void ? [] : Array(UnsafeRawBufferPointer(start: ret, count: size))
}

/// Every signature through a closure IMP (called by libffi and, where the layout allows, by the
/// direct call), then through a hook whose original is that IMP without its owner, so that the
/// hook reaches it with the direct call. Returns how many closure IMPs were trampolines.
@discardableResult
func checkTrampolineSignatures(_ label: String, file: StaticString = #filePath, line: UInt = #line) throws -> Int {
    var trampolines = 0
    for (n, types) in trampolineSignatures.enumerated() {
        let what = "\(label) \(types)"
        let sig = try Signature(types)
        let probe = TrampolineProbe(sig)
        let owner = try makeClass("TrampOwner\(n)")
        let sel = Selector("call\(n)")
        let method = try owner.addMethod(sel, types: types, rawBody: { ret, args in probe.body(ret, args) })
        let imp = method.implementation
        if imp.owner?.isTrampoline == true { trampolines += 1 }
        let obj = try owner.createInstance()
        let args = (2..<sig.argumentTypes.count).map { trampolineBytes(sig.storage.argumentSizes[$0], seed: $0 &* 13 &+ n) }

        for direct in sig.storage.layout == nil ? [false] : [false, true] {
            probe.received = []
            let got = trampolineCall(sig, imp.pointer, receiver: obj.raw, selector: sel, arguments: args, direct: direct)
            XCTAssertEqual(probe.received, args, "\(what): arguments the closure saw (direct call: \(direct))", file: file, line: line)
            XCTAssertEqual(got, probe.returnBytes, "\(what): return value (direct call: \(direct))", file: file, line: line)
        }

        // A hook around the same IMP installed without its owner: the hook's call of the
        // original cannot take the closure-body shortcut.
        let hooked = try makeClass("TrampHooked\(n)")
        try hooked.addMethod(sel, implementation: IMP(imp.pointer), types: types)
        let order = Locked<[String]>([])
        let tokens = [
            try hooked.hook(sel, .before) { _ in order.append("before") },
            try hooked.hook(sel, .instead) { ctx in order.append("instead"); try ctx.proceed() },
            try hooked.hook(sel, .after) { _ in order.append("after") },
        ]
        let hookedIMP = hooked.ownMethod(for: sel)!.implementation
        let target = try hooked.createInstance()
        probe.received = []
        let got = trampolineCall(sig, hookedIMP.pointer, receiver: target.raw, selector: sel, arguments: args, direct: false)
        XCTAssertEqual(order.take(), ["before", "instead", "after"], what, file: file, line: line)
        XCTAssertEqual(probe.received, args, "\(what): arguments through the hook", file: file, line: line)
        XCTAssertEqual(got, probe.returnBytes, "\(what): return value through the hook", file: file, line: line)
        tokens.forEach { $0.remove() }

        // A hook on the closure method itself: the original is a Swift closure, reached through
        // its body with the hook's argument vector rather than a call of its slot.
        let ownHook = try owner.hook(sel, .instead) { ctx in order.append("own"); try ctx.proceed() }
        let ownIMP = owner.ownMethod(for: sel)!.implementation
        XCTAssertNotEqual(ownIMP, imp, "\(what): the hook has a slot of its own", file: file, line: line)
        for direct in sig.storage.layout == nil ? [false] : [false, true] {
            probe.received = []
            let got = trampolineCall(sig, ownIMP.pointer, receiver: obj.raw, selector: sel, arguments: args, direct: direct)
            XCTAssertEqual(order.take(), ["own"], what, file: file, line: line)
            XCTAssertEqual(probe.received, args, "\(what): arguments through a hook on the closure (direct call: \(direct))",
                           file: file, line: line)
            XCTAssertEqual(got, probe.returnBytes, "\(what): return value through a hook on the closure (direct call: \(direct))",
                           file: file, line: line)
        }
        ownHook.remove()
        XCTAssertEqual(owner.ownMethod(for: sel)!.implementation, imp, "\(what): unhooked", file: file, line: line)
        withExtendedLifetime(method) {}
    }
    return trampolines
}
