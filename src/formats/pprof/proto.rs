//! The messages of pprof's `profile.proto` (package `perftools.profiles`), written
//! here from the public schema as prost derives.
//!
//! Every string is an index into `Profile::string_table`, whose entry 0 is `""`.
//! Strings are kept as raw bytes: pprof itself does not check UTF-8, and frame
//! names are shown lossily anyway. Field numbers are the schema's; fields this
//! schema does not know are skipped by prost.

/// A whole profile.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Profile {
    /// What each `Sample::value` entry measures, in order.
    #[prost(message, repeated, tag = "1")]
    pub sample_type: Vec<ValueType>,
    #[prost(message, repeated, tag = "2")]
    pub sample: Vec<Sample>,
    #[prost(message, repeated, tag = "3")]
    pub mapping: Vec<Mapping>,
    #[prost(message, repeated, tag = "4")]
    pub location: Vec<Location>,
    #[prost(message, repeated, tag = "5")]
    pub function: Vec<Function>,
    /// All strings; entry 0 must be the empty string.
    #[prost(bytes = "vec", repeated, tag = "6")]
    pub string_table: Vec<Vec<u8>>,
    /// Regex (string index) of frames to drop, with everything below them.
    #[prost(int64, tag = "7")]
    pub drop_frames: i64,
    /// Regex (string index) of frames to keep despite `drop_frames`.
    #[prost(int64, tag = "8")]
    pub keep_frames: i64,
    /// When the profile was collected, nanoseconds since the epoch.
    #[prost(int64, tag = "9")]
    pub time_nanos: i64,
    #[prost(int64, tag = "10")]
    pub duration_nanos: i64,
    /// What the sampling period counts.
    #[prost(message, optional, tag = "11")]
    pub period_type: Option<ValueType>,
    #[prost(int64, tag = "12")]
    pub period: i64,
    /// Free-form comments (string indexes).
    #[prost(int64, repeated, tag = "13")]
    pub comment: Vec<i64>,
    /// The sample type shown by default (string index of its `type`).
    #[prost(int64, tag = "14")]
    pub default_sample_type: i64,
    /// A link to documentation of the profile's kind (string index).
    #[prost(int64, tag = "15")]
    pub doc_url: i64,
}

/// A type and unit, both string indexes.
#[derive(Clone, Copy, PartialEq, Eq, prost::Message)]
pub struct ValueType {
    #[prost(int64, tag = "1")]
    pub r#type: i64,
    #[prost(int64, tag = "2")]
    pub unit: i64,
}

/// One stack with its values.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Sample {
    /// Location ids, the leaf (innermost call) first.
    #[prost(uint64, repeated, tag = "1")]
    pub location_id: Vec<u64>,
    /// One value per `Profile::sample_type`.
    #[prost(int64, repeated, tag = "2")]
    pub value: Vec<i64>,
    #[prost(message, repeated, tag = "3")]
    pub label: Vec<Label>,
}

/// A key with a string or a numeric value.
#[derive(Clone, Copy, PartialEq, Eq, prost::Message)]
pub struct Label {
    #[prost(int64, tag = "1")]
    pub key: i64,
    /// String index; 0 for a numeric label.
    #[prost(int64, tag = "2")]
    pub str: i64,
    #[prost(int64, tag = "3")]
    pub num: i64,
    /// String index of `num`'s unit.
    #[prost(int64, tag = "4")]
    pub num_unit: i64,
}

/// A mapped binary or library.
#[derive(Clone, Copy, PartialEq, Eq, prost::Message)]
pub struct Mapping {
    #[prost(uint64, tag = "1")]
    pub id: u64,
    #[prost(uint64, tag = "2")]
    pub memory_start: u64,
    #[prost(uint64, tag = "3")]
    pub memory_limit: u64,
    #[prost(uint64, tag = "4")]
    pub file_offset: u64,
    /// String index of the file's path.
    #[prost(int64, tag = "5")]
    pub filename: i64,
    #[prost(int64, tag = "6")]
    pub build_id: i64,
    #[prost(bool, tag = "7")]
    pub has_functions: bool,
    #[prost(bool, tag = "8")]
    pub has_filenames: bool,
    #[prost(bool, tag = "9")]
    pub has_line_numbers: bool,
    #[prost(bool, tag = "10")]
    pub has_inline_frames: bool,
}

/// A program counter, with the (possibly inlined) source lines it belongs to.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Location {
    #[prost(uint64, tag = "1")]
    pub id: u64,
    #[prost(uint64, tag = "2")]
    pub mapping_id: u64,
    #[prost(uint64, tag = "3")]
    pub address: u64,
    /// `line[0]` is the innermost inlined call, the last one the caller.
    #[prost(message, repeated, tag = "4")]
    pub line: Vec<Line>,
    #[prost(bool, tag = "5")]
    pub is_folded: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, prost::Message)]
pub struct Line {
    #[prost(uint64, tag = "1")]
    pub function_id: u64,
    #[prost(int64, tag = "2")]
    pub line: i64,
    #[prost(int64, tag = "3")]
    pub column: i64,
}

#[derive(Clone, Copy, PartialEq, Eq, prost::Message)]
pub struct Function {
    #[prost(uint64, tag = "1")]
    pub id: u64,
    /// String index of the display name.
    #[prost(int64, tag = "2")]
    pub name: i64,
    /// String index of the mangled (system) name.
    #[prost(int64, tag = "3")]
    pub system_name: i64,
    #[prost(int64, tag = "4")]
    pub filename: i64,
    #[prost(int64, tag = "5")]
    pub start_line: i64,
}

#[cfg(test)]
mod tests {
    use prost::Message;

    use super::*;

    #[test]
    fn round_trips_and_uses_the_schema_field_numbers() {
        let p = Profile {
            sample_type: vec![ValueType { r#type: 1, unit: 2 }],
            sample: vec![Sample {
                location_id: vec![1],
                value: vec![7],
                label: vec![],
            }],
            string_table: vec![b"".to_vec(), b"cpu".to_vec(), b"ns".to_vec()],
            time_nanos: 5,
            ..Profile::default()
        };
        let bytes = p.encode_to_vec();
        // sample_type (1, length-delimited) = 0x0a, ValueType.type (1, varint) = 0x08.
        assert_eq!(&bytes[..6], &[0x0a, 0x04, 0x08, 0x01, 0x10, 0x02]);
        // sample (2) = 0x12; location_id packed (1, LEN) = 0x0a; value packed = 0x12.
        assert_eq!(
            &bytes[6..14],
            &[0x12, 0x06, 0x0a, 0x01, 0x01, 0x12, 0x01, 0x07]
        );
        // string_table (6) = 0x32, then time_nanos (9, varint) = 0x48.
        assert_eq!(bytes[14], 0x32);
        assert_eq!(&bytes[bytes.len() - 2..], &[0x48, 0x05]);
        assert_eq!(Profile::decode(bytes.as_slice()).ok(), Some(p));
    }

    #[test]
    fn reads_unpacked_repeated_scalars() {
        // Sample with location_id 3 and 4 written unpacked (field 1, varint).
        let bytes = [0x12, 0x06, 0x08, 0x03, 0x08, 0x04, 0x10, 0x09];
        let p = Profile::decode(&bytes[..]).unwrap_or_default();
        assert_eq!(p.sample.len(), 1);
        assert_eq!(p.sample[0].location_id, vec![3, 4]);
        assert_eq!(p.sample[0].value, vec![9]);
    }
}
