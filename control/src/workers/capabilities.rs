//! Linux capability numbers and names (capability.h), so a handshake gap
//! names `CAP_SYS_ADMIN` rather than bit 21.

const NAMES: [&str; 41] = [
    "CAP_CHOWN",
    "CAP_DAC_OVERRIDE",
    "CAP_DAC_READ_SEARCH",
    "CAP_FOWNER",
    "CAP_FSETID",
    "CAP_KILL",
    "CAP_SETGID",
    "CAP_SETUID",
    "CAP_SETPCAP",
    "CAP_LINUX_IMMUTABLE",
    "CAP_NET_BIND_SERVICE",
    "CAP_NET_BROADCAST",
    "CAP_NET_ADMIN",
    "CAP_NET_RAW",
    "CAP_IPC_LOCK",
    "CAP_IPC_OWNER",
    "CAP_SYS_MODULE",
    "CAP_SYS_RAWIO",
    "CAP_SYS_CHROOT",
    "CAP_SYS_PTRACE",
    "CAP_SYS_PACCT",
    "CAP_SYS_ADMIN",
    "CAP_SYS_BOOT",
    "CAP_SYS_NICE",
    "CAP_SYS_RESOURCE",
    "CAP_SYS_TIME",
    "CAP_SYS_TTY_CONFIG",
    "CAP_MKNOD",
    "CAP_LEASE",
    "CAP_AUDIT_WRITE",
    "CAP_AUDIT_CONTROL",
    "CAP_SETFCAP",
    "CAP_MAC_OVERRIDE",
    "CAP_MAC_ADMIN",
    "CAP_SYSLOG",
    "CAP_WAKE_ALARM",
    "CAP_BLOCK_SUSPEND",
    "CAP_AUDIT_READ",
    "CAP_PERFMON",
    "CAP_BPF",
    "CAP_CHECKPOINT_RESTORE",
];

pub const CAP_KILL: u64 = 1 << 5;
pub const CAP_SETGID: u64 = 1 << 6;
pub const CAP_SETUID: u64 = 1 << 7;

/// The names of the capabilities set in `mask`, in bit order; a bit past the
/// known ones is named by its number.
pub fn names(mask: u64) -> Vec<String> {
    (0..64)
        .filter(|bit| mask & (1u64 << bit) != 0)
        .map(|bit| match NAMES.get(bit) {
            Some(name) => (*name).to_string(),
            None => format!("capability {bit}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_are_named() {
        assert_eq!(
            names(CAP_SETUID | CAP_SETGID | CAP_KILL | (1 << 21)),
            ["CAP_KILL", "CAP_SETGID", "CAP_SETUID", "CAP_SYS_ADMIN"]
        );
        assert_eq!(names(1 << 50), ["capability 50"]);
        assert!(names(0).is_empty());
    }
}
