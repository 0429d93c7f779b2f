#!/bin/sh
echo convert
