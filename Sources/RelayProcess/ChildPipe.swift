#if canImport(Glibc)
import Glibc
private let closeDescriptor = Glibc.close
#elseif canImport(Musl)
import Musl
private let closeDescriptor = Musl.close
#endif

/// A child's pipe ends, as the loops that pump them use them (non-blocking descriptors, -1 once closed).
public enum ChildPipe {
    /// Reads once (so a fast writer cannot keep a loop from its limits) and hands what came to
    /// `consume`; closes the pipe on end of file or an error. Returns whether it is still open.
    public static func drain(_ fd: inout Int32, into buffer: inout [UInt8], _ consume: (ArraySlice<UInt8>) -> Void) -> Bool {
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count > 0 {
            consume(buffer[..<count])
            return true
        }
        if count < 0 && (errno == EAGAIN || errno == EINTR) { return true }
        close(&fd)
        return false
    }

    /// Closes `fd` unless it is closed already, and marks it closed.
    public static func close(_ fd: inout Int32) {
        if fd >= 0 { _ = closeDescriptor(fd) }
        fd = -1
    }
}
