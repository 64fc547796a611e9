#include "collectors/clock.hpp"
