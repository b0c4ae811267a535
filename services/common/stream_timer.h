#pragma once

// The timer a front door gives StreamEvents: a Clock wait on the
// invocation's executor, then the callback.

#include <boost/asio/any_io_executor.hpp>

#include "services/common/clock.h"
#include "services/common/stream_events.h"

namespace skillrunner {

// `clock` must outlive every wait it starts. A wait that is cancelled (the
// executor stopped) does not call back.
StreamEvents::Timer MakeClockTimer(Clock& clock, boost::asio::any_io_executor executor);

}  // namespace skillrunner
