import Glibc

/// A status line on stderr: redrawn in place on a terminal; elsewhere one line per stage
/// (calibration, each round), so that logs stay short.
final class Progress {
    private let isTerminal = isatty(2) != 0
    private var lastStage = ""

    func note(_ text: String) { FileHandleStderr.write(isTerminal ? "\r\u{1B}[K\(text)" : "\(text)\n") }

    func update(_ stage: String, _ detail: String) {
        if isTerminal {
            FileHandleStderr.write("\r\u{1B}[K\(stage) \(detail)")
        } else if stage != lastStage {
            lastStage = stage
            FileHandleStderr.write("\(stage) …\n")
        }
    }

    func finish() { if isTerminal { FileHandleStderr.write("\r\u{1B}[K") } }
}

/// Unbuffered writes to standard error.
enum FileHandleStderr {
    static func write(_ s: String) {
        var s = s
        s.withUTF8 { _ = Glibc.write(2, $0.baseAddress, $0.count) }
    }
}

/// A file that could not be read or written, with the reason from the C library.
struct FileError: Error, CustomStringConvertible {
    let path: String
    let action: String
    let reason: String
    var description: String { "cannot \(action) '\(path)': \(reason)" }
}

/// Whole-file reads and writes, without Foundation.
enum TextFile {
    static func write(_ text: String, to path: String) throws {
        guard let file = fopen(path, "w") else {
            throw FileError(path: path, action: "write", reason: String(cString: strerror(errno)))
        }
        defer { fclose(file) }
        var text = text
        let written = text.withUTF8 { fwrite($0.baseAddress, 1, $0.count, file) }
        guard written == text.utf8.count, fflush(file) == 0 else {
            throw FileError(path: path, action: "write", reason: String(cString: strerror(errno)))
        }
    }

    static func read(_ path: String) throws -> String {
        guard let file = fopen(path, "r") else {
            throw FileError(path: path, action: "read", reason: String(cString: strerror(errno)))
        }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = fread(&buffer, 1, buffer.count, file)
            if n == 0 { break }
            bytes += buffer[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
