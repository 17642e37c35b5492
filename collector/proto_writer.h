// The encoder lives in schema/ (shared with tools/); kept for existing includes.
#pragma once
#include "schema/proto_writer.h"
