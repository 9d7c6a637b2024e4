//! The two tools, `get_current_time` and `convert_time`, and what they answer.
//!
//! The results are the original's JSON field for field: the zone as asked, the time as ISO 8601
//! to the second with its UTC offset, the English day of the week, whether daylight saving time
//! is in effect, and for a conversion the difference of the two offsets in hours (`+9.0h`,
//! `+5.75h`). A failure the model can fix is a tool error worded as the original words it.

use std::borrow::Cow;

use jiff::civil::{Date, Time};
use jiff::tz::{AmbiguousOffset, Offset, TimeZone};
use jiff::{Timestamp, ZonedDateTime};
use mcp_runtime::prelude::*;
use schemars::{Schema, SchemaGenerator, json_schema};

use crate::zones;

/// The time in one zone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct TimeResult {
    /// The zone, as it was asked for.
    pub(crate) timezone: String,
    /// ISO 8601 to the second, with the UTC offset (`2025-01-01T13:00:00+01:00`).
    pub(crate) datetime: String,
    /// The day of the week, in English.
    pub(crate) day_of_week: String,
    /// Whether daylight saving time is in effect.
    pub(crate) is_dst: bool,
}

/// A time in one zone and the same instant in another.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct TimeConversionResult {
    /// The time asked about.
    pub(crate) source: TimeResult,
    /// The same instant in the target zone.
    pub(crate) target: TimeResult,
    /// The target's UTC offset minus the source's, in hours (`+9.0h`, `-4.5h`, `+5.75h`).
    pub(crate) time_difference: String,
}

/// Get current time in a specific timezone
#[tool(
    name = "get_current_time",
    read_only,
    destructive = false,
    idempotent,
    open_world = false
)]
pub(crate) fn get_current_time(timezone: ZoneArgument) -> Result<TimeResult, ToolError> {
    const TOOL: &str = "get_current_time";
    let name = required(TOOL, "timezone", timezone.0)?;
    let zone = zone(TOOL, &name)?;
    Ok(describe(name, &Timestamp::now().to_zoned_datetime(zone)))
}

/// Convert time between timezones
#[tool(
    name = "convert_time",
    read_only,
    destructive = false,
    idempotent,
    open_world = false
)]
pub(crate) fn convert_time(
    source_timezone: SourceZoneArgument,
    /// Time to convert in 24-hour format (HH:MM)
    time: String,
    target_timezone: TargetZoneArgument,
) -> Result<TimeConversionResult, ToolError> {
    const TOOL: &str = "convert_time";
    let source_name = required(TOOL, "source_timezone", source_timezone.0)?;
    let target_name = required(TOOL, "target_timezone", target_timezone.0)?;
    let source_zone = zone(TOOL, &source_name)?;
    let target_zone = zone(TOOL, &target_name)?;
    let clock = parse_clock(&time)
        .ok_or_else(|| failed(TOOL, "Invalid time format. Expected HH:MM [24-hour format]"))?;
    convert(
        (source_name, source_zone),
        (target_name, target_zone),
        Timestamp::now(),
        &time,
        clock,
    )
    .map_err(|message| failed(TOOL, message))
}

/// `time` on today's date in the source zone (today as the source zone has it at `now`), and
/// the same instant in the target zone. A time a clock change skips that day is refused; one it
/// repeats is the first of the two, as the original takes it.
pub(crate) fn convert(
    (source_name, source_zone): (String, TimeZone),
    (target_name, target_zone): (String, TimeZone),
    now: Timestamp,
    time: &str,
    clock: Time,
) -> Result<TimeConversionResult, String> {
    let today: Date = now.to_zoned_datetime(source_zone.clone()).date();
    let wall = today.to_datetime(clock);
    let ambiguous = source_zone.to_ambiguous_zoned_datetime(wall);
    if let AmbiguousOffset::Gap { .. } = ambiguous.offset() {
        return Err(format!(
            "Invalid time: {time} does not exist in {source_name} on {today} (skipped by a clock change)"
        ));
    }
    let source = ambiguous.earlier().map_err(|error| error.to_string())?;
    let target = source.with_time_zone(target_zone);
    let difference = target.offset().seconds() - source.offset().seconds();
    Ok(TimeConversionResult {
        time_difference: hours(difference),
        source: describe(source_name, &source),
        target: describe(target_name, &target),
    })
}

/// The result fields of `time`, reported under the zone name `name`.
fn describe(name: String, time: &ZonedDateTime) -> TimeResult {
    let info = time.time_zone().to_offset_info(time.timestamp());
    TimeResult {
        timezone: name,
        datetime: format!(
            "{}{}",
            time.datetime().strftime("%Y-%m-%dT%H:%M:%S"),
            iso_offset(time.offset())
        ),
        day_of_week: time.strftime("%A").to_string(),
        is_dst: info.dst().is_dst(),
    }
}

/// An offset as ISO 8601 writes it after a time: `+01:00`, `-04:30`, and the seconds only when
/// there are some (`+00:09:21`, a historical local mean time).
fn iso_offset(offset: Offset) -> String {
    let total = offset.seconds();
    let sign = if total < 0 { '-' } else { '+' };
    let total = total.unsigned_abs();
    let (h, m, s) = (total / 3600, total / 60 % 60, total % 60);
    if s == 0 {
        format!("{sign}{h:02}:{m:02}")
    } else {
        format!("{sign}{h:02}:{m:02}:{s:02}")
    }
}

/// A difference of offsets in hours: one decimal for whole hours (`+9.0h`, `-5.0h`, `+0.0h`),
/// otherwise at most two without trailing zeros (`+5.75h`, `-3.5h`).
fn hours(seconds: i32) -> String {
    let hours = f64::from(seconds) / 3600.0;
    if hours.fract() == 0.0 {
        format!("{hours:+.1}h")
    } else {
        let fixed = format!("{hours:+.2}");
        format!("{}h", fixed.trim_end_matches('0').trim_end_matches('.'))
    }
}

/// `HH:MM` on a 24-hour clock, as the original reads it: one or two digits each, hours 0-23,
/// minutes 0-59, nothing around them.
pub(crate) fn parse_clock(text: &str) -> Option<Time> {
    let (hour, minute) = text.split_once(':')?;
    let number = |part: &str, max: i8| -> Option<i8> {
        if part.is_empty() || part.len() > 2 || !part.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        part.parse::<i8>().ok().filter(|n| *n <= max)
    };
    Time::new(number(hour, 23)?, number(minute, 59)?, 0, 0).ok()
}

/// The zone `name`, or the tool error the original gives for it.
fn zone(tool: &str, name: &str) -> Result<TimeZone, ToolError> {
    zones::lookup(name).map_err(|error| failed(tool, format!("Invalid timezone: {error}")))
}

/// An empty zone name is reported as missing, as the original does.
fn required(tool: &str, argument: &str, value: String) -> Result<String, ToolError> {
    if value.is_empty() {
        return Err(failed(
            tool,
            format!("Missing required argument: {argument}"),
        ));
    }
    Ok(value)
}

/// A tool error worded as the original's: its SDK puts `Error executing tool NAME: ` before the
/// message of every failure a tool raises.
fn failed(tool: &str, message: impl std::fmt::Display) -> ToolError {
    ToolError::new(format!("Error executing tool {tool}: {message}"))
}

/// A time zone argument, whose description names the local zone detected at start-up, as the
/// original's does. (The description is computed when the server is built, after
/// [`zones::set_local`], so it is the type's schema rather than a `///` on the parameter.)
macro_rules! zone_argument {
    ($(#[$doc:meta])* $name:ident, $describe:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Deserialize)]
        #[serde(transparent)]
        pub(crate) struct $name(pub(crate) String);

        impl JsonSchema for $name {
            fn schema_name() -> Cow<'static, str> {
                Cow::Borrowed(stringify!($name))
            }

            fn inline_schema() -> bool {
                true
            }

            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                let describe: fn(&str) -> String = $describe;
                json_schema!({
                    "type": "string",
                    "description": describe(zones::local()),
                })
            }
        }
    };
}

zone_argument!(
    /// `get_current_time`'s `timezone`.
    ZoneArgument,
    |local| format!(
        "IANA timezone name (e.g., 'America/New_York', 'Europe/London'). Use '{local}' as local timezone if no timezone provided by the user."
    )
);
zone_argument!(
    /// `convert_time`'s `source_timezone`.
    SourceZoneArgument,
    |local| format!(
        "Source IANA timezone name (e.g., 'America/New_York', 'Europe/London'). Use '{local}' as local timezone if no source timezone provided by the user."
    )
);
zone_argument!(
    /// `convert_time`'s `target_timezone`.
    TargetZoneArgument,
    |local| format!(
        "Target IANA timezone name (e.g., 'Asia/Tokyo', 'America/San_Francisco'). Use '{local}' as local timezone if no target timezone provided by the user."
    )
);
