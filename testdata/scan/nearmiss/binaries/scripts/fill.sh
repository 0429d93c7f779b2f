#!/bin/sh
echo fill
